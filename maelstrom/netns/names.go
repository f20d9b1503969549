package netns

import (
	"fmt"
	"regexp"
	"strconv"
)

// Every namespace a lab creates is named
//
//	chunklease-<pid>-<start>-<seq>-<member>
//
// where pid and start identify the creating process (start is its start
// time in clock ticks after boot, field 22 of /proc/<pid>/stat, so a
// reused pid is told apart), seq numbers the labs of that process from 1,
// and member is "switch", "client" or "node-<id>". Nothing else a lab
// makes has a name in the root namespace: links, addresses, rules and
// queues live inside these namespaces and go with them.
const namePrefix = "chunklease-"

// labName identifies one lab: its creator and its number there.
type labName struct {
	pid        int
	startTicks uint64
	seq        uint64
}

// String is the run's prefix, e.g. "chunklease-4242-123456-1".
func (n labName) String() string {
	return fmt.Sprintf("%s%d-%d-%d", namePrefix, n.pid, n.startTicks, n.seq)
}

// Member names: the switch, the client and each node.
const (
	memberSwitch = "switch"
	memberClient = "client"
	memberNode   = "node-"
)

// namespace is the file name under /run/netns of one member.
func (n labName) namespace(member string) string { return n.String() + "-" + member }

var memberPattern = regexp.MustCompile(`^chunklease-([0-9]+)-([0-9]+)-([0-9]+)-(switch|client|node-[A-Za-z0-9_.-]+)$`)

// parseNamespace reads a name made by labName.namespace; ok is false for
// any other name (it is not ours, and is left alone).
func parseNamespace(name string) (n labName, member string, ok bool) {
	m := memberPattern.FindStringSubmatch(name)
	if m == nil {
		return labName{}, "", false
	}
	pid, err1 := strconv.Atoi(m[1])
	start, err2 := strconv.ParseUint(m[2], 10, 64)
	seq, err3 := strconv.ParseUint(m[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return labName{}, "", false
	}
	return labName{pid: pid, startTicks: start, seq: seq}, m[4], true
}

var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// validNodeID: a node id becomes part of a file name.
func validNodeID(id string) error {
	if !nodeIDPattern.MatchString(id) {
		return fmt.Errorf("node id %q: use 1 to 64 letters, digits, '_', '.' or '-'", id)
	}
	return nil
}
