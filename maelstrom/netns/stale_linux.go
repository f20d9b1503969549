package netns

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
)

// netnsDir is where named namespaces live (as `ip netns` keeps them).
const netnsDir = "/run/netns"

// CleanStale removes every stale lab: one whose namespaces are still
// named under /run/netns while the process that created it is gone (for
// instance a harness killed with SIGKILL). It kills the processes still
// inside them and deletes the namespaces, and returns one message per lab
// removed, naming the lab, its owner, the namespaces and the processes.
// Labs of running processes, and names not made by this package, are
// left alone. Create calls it first.
func CleanStale() ([]string, error) {
	labs, err := labsOnDisk()
	if err != nil {
		return nil, err
	}
	var msgs []string
	var errs []error
	for _, lab := range labs {
		if ownerAlive(lab.name) {
			continue
		}
		msg, err := removeStale(lab)
		msgs = append(msgs, msg)
		errs = append(errs, err)
	}
	return msgs, errors.Join(errs...)
}

// diskLab is a lab found by its namespace names.
type diskLab struct {
	name       labName
	namespaces []string
}

// labsOnDisk groups this package's names under /run/netns by lab.
func labsOnDisk() ([]diskLab, error) {
	entries, err := os.ReadDir(netnsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for stale labs: %w", err)
	}
	var labs []diskLab
	index := map[labName]int{}
	for _, e := range entries {
		n, _, ok := parseNamespace(e.Name())
		if !ok {
			continue
		}
		i, seen := index[n]
		if !seen {
			i = len(labs)
			index[n] = i
			labs = append(labs, diskLab{name: n})
		}
		labs[i].namespaces = append(labs[i].namespaces, e.Name())
	}
	return labs, nil
}

// removeStale kills what runs in lab's namespaces and deletes them. A
// namespace whose mount was hidden under a later mount on /run/netns
// (deleteName) is found only as it is deleted: what runs in it is killed
// then, and the kernel frees it.
func removeStale(lab diskLab) (string, error) {
	inodes := map[uint64]string{}
	for _, ns := range lab.namespaces {
		var st syscall.Stat_t
		if err := syscall.Stat(netnsDir+"/"+ns, &st); err == nil {
			inodes[st.Ino] = ns
		}
	}
	var killed []string
	if procs := processesIn(inodes); len(procs) > 0 {
		killed = append(killed, fmt.Sprintf("%d process(es) left in them: %s", len(procs), killAll(procs)))
	}
	var errs []error
	hidden := map[uint64]string{}
	for _, ns := range lab.namespaces {
		found, err := deleteName(ns)
		if err != nil {
			errs = append(errs, fmt.Errorf("stale lab %s: %w", lab.name, err))
		}
		for _, ino := range found {
			hidden[ino] = ns
		}
	}
	if procs := processesIn(hidden); len(procs) > 0 {
		killed = append(killed, fmt.Sprintf("%d process(es) left in namespaces hidden under a mount on %s: %s", len(procs), netnsDir, killAll(procs)))
	}
	what := "no process was left in them"
	if len(killed) > 0 {
		what = "killed " + strings.Join(killed, "; ")
	}
	slices.Sort(lab.namespaces)
	msg := fmt.Sprintf("removed stale lab %s left by pid %d, which is no longer running: namespaces %s; %s",
		lab.name, lab.name.pid, strings.Join(lab.namespaces, ", "), what)
	return msg, errors.Join(errs...)
}
