package workloadtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/workloads"
)

// Service answers client requests in a simulation. It processes a request
// at its invoke time and returns the reply (nil: lost) and its delay.
type Service interface {
	Handle(now time.Duration, node int, req json.RawMessage) (json.RawMessage, time.Duration)
}

// Config is a simulated run: workers talking to nodes (worker i to node
// i mod nodes), for a duration, each reply lost after a timeout.
type Config struct {
	Workers, Nodes int
	Duration       time.Duration // no op is invoked at or after it
	Timeout        time.Duration
}

type event struct {
	at     time.Duration
	seq    int
	worker int
	inv    workloads.Invocation
	reply  json.RawMessage
}

// Simulate drives a workload in virtual time the way the harness does in
// real time: completions first, then every free worker is offered an op,
// lowest first, then time jumps to the next completion or Wake. It fails
// the test when Next refuses a free worker while Wake says an op is due.
func Simulate(tb testing.TB, w workloads.Workload, svc Service, cfg Config) []history.Op {
	return newSim(tb, w, svc, cfg, false).run()
}

// SimulateRotating drives a workload in virtual time as the harness's
// loop does: completions first, then the free workers are offered ops
// starting after the worker that got the last op (so ops, and the nodes
// they go to, rotate), then time jumps to the next completion or Wake.
// (Simulate offers every op to the lowest free worker, which would send a
// rate-limited workload's ops all to one node.)
func SimulateRotating(tb testing.TB, w workloads.Workload, svc Service, cfg Config) []history.Op {
	return newSim(tb, w, svc, cfg, true).run()
}

// sim is one simulated run.
type sim struct {
	tb         testing.TB
	w          workloads.Workload
	svc        Service
	cfg        Config
	rotate     bool
	hw         *history.Writer
	busy       []bool
	procs      []int // each worker's Jepsen process
	pending    []event
	seq        int
	nextWorker int // rotating: where the next offer starts
}

func newSim(tb testing.TB, w workloads.Workload, svc Service, cfg Config, rotate bool) *sim {
	s := &sim{tb: tb, w: w, svc: svc, cfg: cfg, rotate: rotate, hw: history.NewWriter(io.Discard),
		busy: make([]bool, cfg.Workers), procs: make([]int, cfg.Workers)}
	for i := range s.procs {
		s.procs[i] = i
	}
	return s
}

func (s *sim) run() []history.Op {
	for now := time.Duration(0); ; {
		s.completeDue(now)
		refused := s.offer(now)
		next := workloads.Never
		if len(s.pending) > 0 {
			next = s.pending[0].at
		}
		wake := s.w.Wake()
		switch {
		case wake >= next || wake >= s.cfg.Duration:
		case s.rotate && slices.Contains(s.busy, false):
			next = max(wake, now+1) // Wake may lie in the past while every worker was busy
		case !s.rotate && refused:
			next = wake
		}
		if next == workloads.Never {
			return s.hw.Ops()
		}
		now = next
	}
}

// completeDue completes the calls whose replies are due by now.
func (s *sim) completeDue(now time.Duration) {
	for len(s.pending) > 0 && s.pending[0].at <= now {
		ev := s.pending[0]
		s.pending = s.pending[1:]
		c := s.w.Complete(now, ev.worker, ev.inv, ev.reply)
		s.record(now, ev.worker, c.Type, ev.inv.F, c.Value, c.Error)
		if c.Type == history.Info {
			s.procs[ev.worker] += s.cfg.Workers // Jepsen: a crashed process is replaced
		}
		s.busy[ev.worker] = false
	}
}

// offer offers an op to every free worker and reports whether Next
// refused one.
func (s *sim) offer(now time.Duration) bool {
	refused := false
	for k := range s.cfg.Workers {
		wk := k
		if s.rotate {
			wk = (s.nextWorker + k) % s.cfg.Workers
		}
		if s.busy[wk] || now >= s.cfg.Duration {
			continue
		}
		inv, ok := s.w.Next(now, wk)
		if !ok {
			if wake := s.w.Wake(); !s.rotate && wake <= now {
				s.tb.Fatalf("Next refused free worker %d at %v but Wake() = %v", wk, now, wake)
			}
			refused = true
			continue
		}
		s.invoke(now, wk, inv)
	}
	return refused
}

// invoke records the invoke, asks the service and schedules the reply.
func (s *sim) invoke(now time.Duration, wk int, inv workloads.Invocation) {
	s.record(now, wk, history.Invoke, inv.F, inv.Value, "")
	s.busy[wk], s.nextWorker, s.seq = true, (wk+1)%s.cfg.Workers, s.seq+1
	reply, delay := s.svc.Handle(now, wk%s.cfg.Nodes, s.w.Request(inv))
	if reply == nil || delay > s.cfg.Timeout {
		reply, delay = nil, s.cfg.Timeout
	}
	ev := event{at: now + delay, seq: s.seq, worker: wk, inv: inv, reply: reply}
	i, _ := slices.BinarySearchFunc(s.pending, ev, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	s.pending = slices.Insert(s.pending, i, ev)
}

func (s *sim) record(now time.Duration, wk int, typ, f string, value json.RawMessage, errText string) {
	op := history.Op{Time: int64(now), Process: history.Process{ID: s.procs[wk]}, Type: typ, F: f,
		Node: fmt.Sprintf("n%d", wk%s.cfg.Nodes+1), Value: value, Error: errText}
	if _, err := s.hw.Append(op); err != nil {
		s.tb.Fatal(err)
	}
}
