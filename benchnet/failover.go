package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"chunklease/client"
)

// failoverPart: how long a holder is without a working renewal when the
// member it talks to dies, side by side. Ours: a Session (300 ms leases
// by default) held through member A; SIGKILL A; the time until the
// Session's next renewal succeeds (through another member, A being dead),
// and, like for like with etcd's figure, the time until a plain Renew
// called in a loop right after the kill succeeds. etcd: a lease kept
// through its Go client; SIGKILL the leader; the time until a
// KeepAliveOnce called in a loop succeeds again. Between tries the killed
// member is restarted (ours with its default boot wait) and every member
// is ready again. The tries alternate ours and etcd.
type failoverPart struct {
	tries      int
	leaseMs    int64
	maxLeaseMs int64
	hold       time.Duration
	etcdTTLS   int64
}

func (f *failoverPart) flags(fs *flag.FlagSet) {
	fs.IntVar(&f.tries, "tries", 10, "kills of each system")
	fs.Int64Var(&f.leaseMs, "lease-ms", 300, "our Session's lease length")
	fs.Int64Var(&f.maxLeaseMs, "max-lease-ms", 1000, "our members' longest lease, hence the restarted member's boot wait")
	fs.DurationVar(&f.hold, "hold", 3*time.Second, "how long each Session is held after the kill")
	fs.Int64Var(&f.etcdTTLS, "etcd-ttl", 5, "the etcd lease's TTL in seconds")
}

// failoverTry is one kill of one system.
type failoverTry struct {
	System    string  `json:"system"`
	Try       int     `json:"try"`
	Killed    string  `json:"killed"`
	SessionMs float64 `json:"session_ms,omitempty"` // ours: kill to the Session's next renewal
	DirectMs  float64 `json:"direct_ms"`            // kill to the first ok renew (KeepAliveOnce) in a loop
	Renewals  int     `json:"renewals,omitempty"`   // ours: the Session's renewals while held after the kill
	Lost      bool    `json:"lost,omitempty"`       // ours: the Session's Done closed
}

func (f *failoverPart) run(ctx context.Context, env *benchEnv) error {
	if f.leaseMs > f.maxLeaseMs {
		return fmt.Errorf("-lease-ms %d is over -max-lease-ms %d", f.leaseMs, f.maxLeaseMs)
	}
	env.logf("starting 3 lease-node serve members (-max-lease-ms %d: a restart waits that long) and 3 etcd members (--unsafe-no-fsync)", f.maxLeaseMs)
	oc, err := upOurs(env.repo, filepath.Join(env.work, "ours-failover"), env.memberEnv(), env.pids, "-max-lease-ms", fmt.Sprint(f.maxLeaseMs))
	if err != nil {
		return err
	}
	defer oc.down()
	ec, err := startEtcd(env.etcdBin, filepath.Join(env.work, "etcd-failover"), "etcd", false, env.memberEnv(), loopback(env.ports), env.pids)
	if err != nil {
		return err
	}
	defer ec.stop()
	f.etcdMinTTL(ctx, env, ec)
	var tries []failoverTry
	for i := range f.tries {
		o, err := f.oursTry(ctx, env, oc, i)
		if err != nil {
			return fmt.Errorf("ours, try %d: %w", i+1, err)
		}
		e, err := f.etcdTry(ctx, env, ec, i)
		if err != nil {
			return fmt.Errorf("etcd, try %d: %w", i+1, err)
		}
		tries = append(tries, o, e)
		env.save("failover.jsonl", o)
		env.save("failover.jsonl", e)
		env.logf("try %d: ours (killed %s): Session renewed %.1f ms after the kill, a renew loop %.1f ms, %d renewals in %v after, lost %v; etcd (killed leader %s): KeepAliveOnce ok %.0f ms after",
			i+1, o.Killed, o.SessionMs, o.DirectMs, o.Renewals, f.hold, o.Lost, e.Killed, e.DirectMs)
	}
	f.report(env, tries)
	return nil
}

// oursTry holds a Session through member i%3, kills that member, times
// the recovery, holds on, and restarts the member.
func (f *failoverPart) oursTry(ctx context.Context, env *benchEnv, oc *oursCluster, i int) (failoverTry, error) {
	a := i % len(oc.endpoints)
	id := fmt.Sprintf("n%d", a+1)
	res := failoverTry{System: "ours", Try: i + 1, Killed: id}
	eps := append(slices.Clone(oc.endpoints[a:]), oc.endpoints[:a]...) // A first: calls go there while it answers
	c, err := client.New(client.Config{Endpoints: eps, Seed: env.seed + uint64(i)})
	if err != nil {
		return res, err
	}
	defer c.Close()
	chunk := fmt.Sprintf("failover_%d_%d", env.seed, i)
	renewed := make(chan client.Lease, 1024)
	s, err := c.NewSession(ctx, chunk, "cs1", client.SessionOptions{LeaseMs: f.leaseMs, Seed: env.seed + uint64(i),
		OnRenew: func(l client.Lease) {
			select {
			case renewed <- l:
			default:
			}
		}})
	if err != nil {
		return res, fmt.Errorf("session: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Close(cctx)
	}()
	for range 3 { // held through A for three renewals
		if _, err := nextRenewal(s, renewed, 5*time.Second); err != nil {
			return res, err
		}
	}
	probe, err := newProbe(ctx, eps, chunk+"_probe", f.leaseMs, env.seed)
	if err != nil {
		return res, err
	}
	defer probe.Close()
	kill, err := f.killOurs(oc, id)
	if err != nil {
		return res, err
	}
	res.DirectMs = probeUntilOK(ctx, probe, chunk+"_probe", f.leaseMs, kill)
	res.SessionMs, res.Renewals, res.Lost = f.holdThrough(s, renewed, kill)
	env.logf("restarting %s with its default boot wait", id)
	return res, oc.restart(id, env.pids)
}

// killOurs sends SIGKILL to member id and returns when it was sent.
func (f *failoverPart) killOurs(oc *oursCluster, id string) (time.Time, error) {
	ids, err := oc.pids()
	if err != nil {
		return time.Time{}, err
	}
	pid := ids[id]
	kill := time.Now()
	if err := killPID(pid, oc.bin()); err != nil {
		return kill, err
	}
	if !waitUntil(10*time.Second, func() bool { return !isProgram(pid, oc.bin()) }) {
		return kill, fmt.Errorf("%s (pid %d) still runs after SIGKILL", id, pid)
	}
	return kill, nil
}

// holdThrough waits for the Session's first renewal sent after the kill
// (A was dead by then, so another member answered it), then holds the
// Session for f.hold more, counting renewals. It returns the time from
// the kill to that renewal's answer, the renewals, and whether Done
// closed.
func (f *failoverPart) holdThrough(s *client.Session, renewed <-chan client.Lease, kill time.Time) (float64, int, bool) {
	first := -1.0
	for first < 0 {
		l, err := nextRenewal(s, renewed, 5*time.Second)
		if err != nil {
			return 0, 0, true
		}
		if !l.Sent.Before(kill) {
			first = ms(time.Since(kill))
		}
	}
	count := 1
	deadline := time.After(f.hold)
	for {
		select {
		case <-renewed:
			count++
		case <-s.Done():
			return first, count, true
		case <-deadline:
			return first, count, false
		}
	}
}

// nextRenewal waits for the Session's next renewal, or its loss.
func nextRenewal(s *client.Session, renewed <-chan client.Lease, timeout time.Duration) (client.Lease, error) {
	select {
	case l := <-renewed:
		return l, nil
	case <-s.Done():
		return client.Lease{}, fmt.Errorf("the Session was lost: %v", s.Err())
	case <-time.After(timeout):
		return client.Lease{}, errors.New("no renewal in 5 s")
	}
}

// newProbe is a second Client whose preferred member is A, holding a
// lease of its own there (so its next Renew goes to A first).
func newProbe(ctx context.Context, eps []string, chunk string, leaseMs int64, seed uint64) (*client.Client, error) {
	c, err := client.New(client.Config{Endpoints: eps, Seed: seed + 7})
	if err != nil {
		return nil, err
	}
	if _, err := c.Grant(ctx, chunk, "cs1", leaseMs); err != nil {
		c.Close()
		return nil, fmt.Errorf("probe grant: %w", err)
	}
	return c, nil
}

// probeUntilOK renews in a loop from right after the kill until one
// succeeds (at most 100 calls of at most 1 s each); it returns the time
// from the kill to that answer, or -1.
func probeUntilOK(ctx context.Context, c *client.Client, chunk string, leaseMs int64, kill time.Time) float64 {
	for range 100 {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Renew(cctx, chunk, "cs1", leaseMs)
		cancel()
		if err == nil {
			return ms(time.Since(kill))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return -1
}

// etcdTry keeps a lease through etcd's client, kills the leader, times
// the first KeepAliveOnce that succeeds after, and restarts the member.
func (f *failoverPart) etcdTry(ctx context.Context, env *benchEnv, ec *etcdCluster, i int) (failoverTry, error) {
	res := failoverTry{System: "etcd", Try: i + 1}
	cli, err := newEtcdClient(ec.endpoints())
	if err != nil {
		return res, err
	}
	defer cli.Close()
	g, err := cli.Grant(ctx, f.etcdTTLS)
	if err != nil {
		return res, err
	}
	if _, err := cli.KeepAliveOnce(ctx, g.ID); err != nil {
		return res, err
	}
	leader, err := ec.leader(ctx, cli)
	if err != nil {
		return res, err
	}
	m := ec.members[leader]
	res.Killed = m.name
	kill := time.Now()
	m.kill()
	res.DirectMs = -1
	// At most 300 calls of at most 100 ms each: a call answers in a few
	// ms once a leader is there, and a shorter bound measures the wait
	// more finely (it is counted in whole attempts while there is none).
	for range 300 {
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		_, err := cli.KeepAliveOnce(cctx, g.ID)
		cancel()
		if err == nil {
			res.DirectMs = ms(time.Since(kill))
			break
		}
		if ctx.Err() != nil {
			break
		}
	}
	cli.Revoke(ctx, g.ID)
	env.logf("restarting etcd %s", m.name)
	if err := m.start(); err != nil {
		return res, err
	}
	return res, ec.waitHealthy(60 * time.Second)
}

// etcdMinTTL shows etcd's lease granularity: a grant of a 1 s TTL (the
// least the API can ask for; it counts whole seconds) and what it gave.
func (f *failoverPart) etcdMinTTL(ctx context.Context, env *benchEnv, ec *etcdCluster) {
	cli, err := newEtcdClient(ec.endpoints())
	if err != nil {
		return
	}
	defer cli.Close()
	g, err := cli.Grant(ctx, 1)
	if err != nil {
		env.logf("etcd LeaseGrant(TTL 1 s): %v", err)
		return
	}
	cli.Revoke(ctx, g.ID)
	fmt.Fprintf(env.out, "etcd's lease granularity: LeaseGrant asks for a TTL in whole seconds; asked for 1 s, etcd %s granted %d s\n", env.etcdVersion, g.TTL)
}

// report prints the p50 and max of each figure and the sub-second line.
func (f *failoverPart) report(env *benchEnv, tries []failoverTry) {
	var session, direct, etcd []float64
	renewals, lost, nOurs := 0, 0, 0
	for _, t := range tries {
		switch t.System {
		case "ours":
			session, direct = append(session, t.SessionMs), append(direct, t.DirectMs)
			renewals += t.Renewals
			nOurs++
			if t.Lost {
				lost++
			}
		case "etcd":
			etcd = append(etcd, t.DirectMs)
		}
	}
	w := env.out
	fmt.Fprintf(w, "\nfailover: SIGKILL of the member a holder talks to (ours) or of the leader (etcd), %d tries each (load average now %.2f)\n\n", f.tries, loadAverage())
	fmt.Fprintf(w, "| system | measured | tries | p50 ms | max ms |\n|---|---|---|---|---|\n")
	fmt.Fprintf(w, "| ours | a Session's next renewal (%d ms leases, renewed every ~%d ms) | %d | %.1f | %.1f |\n", f.leaseMs, f.leaseMs/3, len(session), median(session), slices.Max(session))
	fmt.Fprintf(w, "| ours | a Renew loop from the kill | %d | %.1f | %.1f |\n", len(direct), median(direct), slices.Max(direct))
	fmt.Fprintf(w, "| etcd %s | a KeepAliveOnce loop from the kill (%d s TTL) | %d | %.1f | %.1f |\n", env.etcdVersion, f.etcdTTLS, len(etcd), median(etcd), slices.Max(etcd))
	for name, xs := range map[string][]float64{"ours (a Renew loop)": direct, "etcd": etcd} {
		if n := len(slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return x >= 0 })); n > 0 {
			fmt.Fprintf(w, "%s: %d tries never renewed within the loop's bound (counted as -1 above)\n", name, n)
		}
	}
	fmt.Fprintf(w, "\nsub-second leases end to end: %d Sessions of %d ms leases, each held %v after a SIGKILL of its member: %d renewals, %d lost\n",
		nOurs, f.leaseMs, f.hold, renewals, lost)
	fmt.Fprintln(w)
	env.goal(failoverGoal(session, etcd, env.etcdVersion))
}

// failoverGoal: a holder of ours renews again sooner after the kill
// than etcd's keepalive does (p50 of the tries); a try that never
// renewed (-1) misses it.
func failoverGoal(session, etcd []float64, version string) goal {
	text := fmt.Sprintf("failover faster than etcd %s's: a Session's next renewal p50 %.1f ms vs a KeepAliveOnce loop's p50 %.1f ms after the kill", version, median(session), median(etcd))
	never := slices.Contains(session, -1) || len(session) == 0 || len(etcd) == 0
	if never {
		return goal{false, text + " (a try never renewed, or none ran)"}
	}
	return goal{median(session) < median(etcd), text}
}
