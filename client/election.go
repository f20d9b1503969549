package client

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Leader election on the master lease (contract section 1, "Master
// lease"). The members elect the master among themselves; a program takes
// part through the node it runs beside: Campaign starts that node's
// campaign (master_start) and watches the node's own answer to
// master_status; the program is leader while the node is master, by the
// node's own timer, less the margins. See the package documentation.

// CampaignOptions tune Campaign; the zero value means the defaults.
type CampaignOptions struct {
	// PollInterval is how often master_status is asked while waiting to
	// become master, and at most how often while master (then also at
	// most a third of the remaining time). 0 means 100 ms.
	PollInterval time.Duration
	// DriftMargin is taken off every believed end of mastership: the most
	// the caller's clock may lose against the node's over one master
	// lease. 0 means 1% of the longest remaining time seen plus 1 ms.
	DriftMargin time.Duration
	// SafetyMargin is how long before the believed end the mastership is
	// declared lost when no status confirmed it. 0 means 10% of the
	// longest remaining time seen.
	SafetyMargin time.Duration
	// Seed seeds the polls' jitter; 0 draws one.
	Seed uint64
}

// Mastership is a node's mastership as watched by Campaign's caller.
type Mastership struct {
	c    *Client
	node string
	opts CampaignOptions
	rand *rand.Rand // the watch loop's only
	ctx  context.Context
	b    belief
	// Guarded by b.mu:
	status MasterStatus // the latest status that said is_master
	// longestMs is the longest remaining time seen, the base of the
	// default margins; only Campaign, then the watch loop, touch it.
	longestMs int64

	closing   chan struct{}
	closeOnce sync.Once
	stopped   chan struct{}
}

// Campaign makes node campaign for the master lease (master_start) and
// blocks until node reports is_master, polling master_status. It returns
// the Mastership, which keeps polling: its Done closes when the node says
// it is no longer master, or when no status confirmed the mastership by
// its believed end less the safety margin. When ctx ends first, Campaign
// stops the node's campaign (master_stop) and returns ctx's error. node
// is the node's client URL.
func (c *Client) Campaign(ctx context.Context, node string, opts CampaignOptions) (*Mastership, error) {
	return c.campaign(ctx, node, opts, false)
}

// campaign is Campaign; late is the broken variant that signals the
// loss a safety margin after the believed end (a negative control).
func (c *Client) campaign(ctx context.Context, node string, opts CampaignOptions, late bool) (*Mastership, error) {
	if opts.PollInterval < 0 || opts.DriftMargin < 0 || opts.SafetyMargin < 0 {
		return nil, errors.New("campaign options: PollInterval, DriftMargin and SafetyMargin must not be negative (0 means the default)")
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 100 * time.Millisecond
	}
	m := &Mastership{c: c, node: node, opts: opts, rand: newRand(opts.Seed), closing: make(chan struct{}), stopped: make(chan struct{})}
	if err := c.MasterStart(ctx, node); err != nil {
		return nil, err
	}
	st, err := m.awaitMaster(ctx)
	if err != nil {
		m.stopCampaign()
		return nil, err
	}
	m.b.what, m.b.late = "mastership of "+node, late
	wctx, stop := context.WithCancel(context.Background())
	m.ctx, m.status = wctx, st
	m.longestMs = st.RemainingMs
	m.b.safety = m.safety()
	if !m.b.start(st.Until(m.drift()), stop) {
		stop()
		m.stopCampaign()
		return nil, fmt.Errorf("%s: the status came back too late to believe it", node)
	}
	go m.watch()
	return m, nil
}

// awaitMaster polls until node says is_master. A status refused for good
// (401, 404, ...) ends the wait; other failures are retried.
func (m *Mastership) awaitMaster(ctx context.Context) (MasterStatus, error) {
	var last error
	for {
		st, err := m.c.MasterStatus(ctx, m.node)
		switch {
		case err == nil && st.IsMaster:
			return st, nil
		case err != nil && fatal(err):
			return MasterStatus{}, err
		case err != nil:
			last = err
		}
		t := time.NewTimer(m.jittered(m.opts.PollInterval))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if last != nil {
				return MasterStatus{}, fmt.Errorf("campaign on %s: %w (last status failure: %w)", m.node, ctx.Err(), last)
			}
			return MasterStatus{}, fmt.Errorf("campaign on %s: %w before the node became master", m.node, ctx.Err())
		}
	}
}

// watch polls master_status while the mastership holds.
func (m *Mastership) watch() {
	defer close(m.stopped)
	for {
		m.b.mu.Lock()
		st := m.status
		m.b.mu.Unlock()
		period := min(m.opts.PollInterval, time.Until(st.Until(m.drift()))/3)
		if !m.b.waitFor(time.Now().Add(m.jittered(max(period, time.Millisecond))), m.closing) {
			return
		}
		lossAt, held := m.b.lossAt()
		if !held {
			return
		}
		ctx, cancel := context.WithDeadline(m.ctx, lossAt)
		st, err := m.c.MasterStatus(ctx, m.node)
		cancel()
		switch {
		case err == nil && !st.IsMaster:
			m.b.lost(fmt.Errorf("the node says it is not master (master: %q)", st.Master))
			return
		case err == nil:
			m.longestMs = max(m.longestMs, st.RemainingMs)
			m.b.extend(st.Until(m.drift()), func() { m.status, m.b.safety = st, m.safety() })
		case fatal(err):
			m.b.lost(err)
			return
		default:
			m.b.failed(err)
		}
	}
}

// Node is the node's client URL.
func (m *Mastership) Node() string { return m.node }

// Done is closed when the mastership ends: lost (Err wraps ErrLost) or
// resigned (ErrClosed). Like Session.Done it can come late after a pause:
// before acting as leader, ask Current (or act through Act).
func (m *Mastership) Done() <-chan struct{} { return m.b.done }

// Err is nil while the mastership holds, then why Done closed.
func (m *Mastership) Err() error { return m.b.getErr() }

// Until is the believed end of the mastership. It describes the
// mastership; Current is the check.
func (m *Mastership) Until() time.Time { return m.b.getUntil() }

// Resign stops watching and stops the node's campaign (master_stop): the
// node stops renewing and gives the master lease back.
func (m *Mastership) Resign(ctx context.Context) error {
	m.closeOnce.Do(func() { close(m.closing) })
	m.b.end(ErrClosed)
	<-m.stopped
	return m.c.MasterStop(ctx, m.node)
}

// stopCampaign is master_stop, best effort, for a campaign given up.
func (m *Mastership) stopCampaign() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = m.c.MasterStop(ctx, m.node)
}

// drift is the drift margin: the option, or 1% of the longest remaining
// time seen plus 1 ms.
func (m *Mastership) drift() time.Duration {
	if m.opts.DriftMargin > 0 {
		return m.opts.DriftMargin
	}
	return time.Duration(m.longestMs)*time.Millisecond/100 + time.Millisecond
}

// safety is the safety margin: the option, or 10% of the longest
// remaining time seen.
func (m *Mastership) safety() time.Duration {
	if m.opts.SafetyMargin > 0 {
		return m.opts.SafetyMargin
	}
	return time.Duration(m.longestMs) * time.Millisecond / 10
}

func (m *Mastership) jittered(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*m.rand.Float64()))
}
