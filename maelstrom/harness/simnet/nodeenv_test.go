package simnet

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"chunklease/maelstrom/harness"
	"chunklease/maelstrom/nemesis"
	"chunklease/workloads/master"
)

// masterScript is an in-process node that answers the master workload's
// requests and never claims mastership: enough for runs that judge how
// the harness launches nodes, not the master lease itself.
func masterScript(self string, m inMsg) ([]string, bool) {
	switch m.body.Type {
	case "master_start", "master_stop":
		return []string{reply(self, m, `"type":"`+m.body.Type+`_ok"`)}, false
	case "master_status":
		return []string{reply(self, m, `"type":"master_status_ok","is_master":false,"master":null,"remaining_ms":0`)}, false
	}
	return echoScript(self, m)
}

// masterSimOptions runs masterScript on three nodes with the master
// workload and leases of leaseMs.
func masterSimOptions(t *testing.T, leaseMs int64, faults nemesis.Faults, seed uint64) (testRun, *fakeNet) {
	t.Helper()
	o, log, _ := simOptions(t, masterScript, 3, 6, seed)
	o.Workload = master.NewMaster(master.MasterOptions{Rate: 20, LeaseMs: leaseMs}, harness.WorkloadSeed(seed))
	o.Faults, o.NemesisInterval, o.TimeLimit = faults, time.Second, 10*time.Second
	return o, log
}

// TestSimMasterNodesGetTheLeaseLength: the master workload's requests
// carry no lease length, so without any fault every node is started with
// LEASE_MAX_MS and LEASE_MS = the workload's lease length (not the node's
// 60 s default), once each; a LEASE_MS in the harness's environment no
// longer than that is kept (nothing added), a longer one is overridden.
func TestSimMasterNodesGetTheLeaseLength(t *testing.T) {
	cases := []struct {
		name, envLeaseMs string
		want             []string
	}{
		{"no LEASE_MS", "", []string{"LEASE_MAX_MS=700", "LEASE_MS=700"}},
		{"a shorter LEASE_MS is kept", "300", []string{"LEASE_MAX_MS=700"}},
		{"the same LEASE_MS is kept", "700", []string{"LEASE_MAX_MS=700"}},
		{"a longer LEASE_MS is overridden", "5000", []string{"LEASE_MAX_MS=700", "LEASE_MS=700"}},
	}
	seed := testSeed(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("LEASE_MS", c.envLeaseMs)
			synctest.Test(t, func(t *testing.T) {
				o, log := masterSimOptions(t, 700, nemesis.Faults{}, seed)
				out := runSim(context.Background(), o)
				if out.Exit != harness.ExitValid {
					t.Fatalf("exit %d (%v), want a valid run", out.Exit, out.Err)
				}
				for _, id := range o.Nodes {
					envs := log.envs(id)
					if len(envs) != 1 || !slices.Equal(envs[0], c.want) {
						t.Errorf("%s launched with %v, want once with %v", id, envs, c.want)
					}
				}
			})
		})
	}
}

// TestSimMasterKillRestartsWithBootWait: under the kill nemesis every
// master node starts with the lease length as LEASE_MAX_MS and LEASE_MS,
// and every restart also gets LEASE_BOOT_WAIT_MS = that length (0 with
// --kill-without-boot-wait), so a restarted node cannot grant the master
// lease while one it forgot may still run.
func TestSimMasterKillRestartsWithBootWait(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	seed := firstSeedHitting(t, testSeed(t), nodes, nemesis.Faults{Kill: true}, time.Second, nemesis.KillOp)
	t.Logf("running with seed %d", seed)
	for _, withoutWait := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			o, log := masterSimOptions(t, 800, nemesis.Faults{Kill: true}, seed)
			o.KillWithoutBootWait = withoutWait
			out := runSim(context.Background(), o)
			if out.Exit == harness.ExitFailed || out.Results == nil {
				t.Fatalf("exit %d (%v)", out.Exit, out.Err)
			}
			wait := "LEASE_BOOT_WAIT_MS=800"
			if withoutWait {
				wait = "LEASE_BOOT_WAIT_MS=0"
			}
			restarts := 0
			for _, id := range o.Nodes {
				envs := log.envs(id)
				if want := []string{"LEASE_MAX_MS=800", "LEASE_MS=800"}; len(envs) == 0 || !slices.Equal(envs[0], want) {
					t.Fatalf("%s: first launch env %v, want %v", id, envs, want)
				}
				for _, env := range envs[1:] {
					if want := []string{"LEASE_MAX_MS=800", "LEASE_MS=800", wait}; !slices.Equal(env, want) {
						t.Errorf("%s: restart env %v, want %v", id, env, want)
					}
				}
				restarts += len(envs) - 1
			}
			if n := out.Results.Nemesis; restarts == 0 || n.NodesRestarted != restarts {
				t.Errorf("%d restarts launched, nemesis figures %+v; want some, all counted", restarts, n)
			}
		})
	}
}

// TestSimNoLeaseEnvWithoutKill: the lease workload's requests carry their
// lease lengths, so without the kill nemesis its nodes inherit the
// harness's environment unchanged, as in Maelstrom, partitions and pauses
// or not; so do the echo workload's, even under kill.
func TestSimNoLeaseEnvWithoutKill(t *testing.T) {
	seed := testSeed(t)
	for _, faults := range []nemesis.Faults{{}, {Partition: true, Pause: true}} {
		synctest.Test(t, func(t *testing.T) {
			o, log := leaseSimOptions(t, faults, 2*time.Second, seed)
			o.TimeLimit = 10 * time.Second
			out := runSim(context.Background(), o)
			if out.Exit == harness.ExitFailed {
				t.Fatalf("faults %+v: exit %d (%v)", faults, out.Exit, out.Err)
			}
			if envs := log.envs("n1"); len(envs) != 1 || len(envs[0]) != 0 {
				t.Errorf("faults %+v: lease node launched with %v, want once with nothing added", faults, envs)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		o, log, _ := simOptions(t, echoScript, 3, 3, seed)
		o.Faults, o.NemesisInterval, o.TimeLimit = nemesis.Faults{Kill: true}, time.Second, 5*time.Second
		out := runSim(context.Background(), o)
		if out.Exit == harness.ExitFailed {
			t.Fatalf("echo under kill: exit %d (%v)", out.Exit, out.Err)
		}
		for _, id := range o.Nodes {
			for _, env := range log.envs(id) {
				if len(env) != 0 {
					t.Errorf("echo node %s launched with %v, want nothing added", id, env)
				}
			}
		}
	})
}
