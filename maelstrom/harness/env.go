package harness

import (
	"os"
	"strconv"
)

// nodeEnv is what a node program gets on top of the harness's own
// environment. A workload with leases (L = its longest lease) sets the
// nodes' lease bounds when the kill or the member nemesis is on (the
// boot wait and the waiting rule between membership changes last the
// longest lease), and in every run when
// its leases have the nodes' own length (workloads.NodeLeased: the master
// workload, whose requests carry none, so L is that length). Every
// program then gets LEASE_MAX_MS=L, and LEASE_MS=L unless the environment
// already names a default lease no longer than that (a node refuses a
// default above its maximum); a restarted program (only the kill
// nemesis restarts) also gets LEASE_BOOT_WAIT_MS=L, so that it stays
// silent until every lease it may have accepted and forgotten has ended
// (the node stretches it by its own drift bound), or 0 with
// --kill-without-boot-wait (the negative control). The member nemesis
// adds LEASE_MEMBERSHIP=on (member.go). Any other run passes nothing, as
// Maelstrom does.
func (r *runner) nodeEnv(restart bool) []string {
	return append(r.leaseEnv(restart), r.memberEnv()...)
}

// leaseEnv is nodeEnv's lease bounds.
func (r *runner) leaseEnv(restart bool) []string {
	if r.leaseMs <= 0 || !(r.o.Faults.Kill || r.o.Faults.Member || r.nodeLeases) {
		return nil
	}
	l := strconv.FormatInt(r.leaseMs, 10)
	env := []string{"LEASE_MAX_MS=" + l}
	if v, err := strconv.ParseInt(os.Getenv("LEASE_MS"), 10, 64); err != nil || v < 1 || v > r.leaseMs {
		env = append(env, "LEASE_MS="+l)
	}
	if restart {
		wait := l
		if r.o.KillWithoutBootWait {
			wait = "0"
		}
		env = append(env, "LEASE_BOOT_WAIT_MS="+wait)
	}
	return env
}
