package harness

import (
	"slices"
	"testing"
)

// TestProcessesAreNeverReused: after an info a worker gets a process no
// op has used; in the main phase it is Jepsen's process + concurrency,
// and the workers the final phase adds, and infos during it, take numbers
// after every process so far.
func TestProcessesAreNeverReused(t *testing.T) {
	r := &runner{o: Options{Concurrency: 2}, workers: []worker{{process: 0}, {process: 1}}}
	used := []int{0, 1}
	info := func(i int) {
		r.newProcess(&r.workers[i])
		used = append(used, r.workers[i].process)
	}
	info(0) // 2
	info(0) // 4
	if got := r.workers[0].process; got != 4 {
		t.Fatalf("main phase: process %d after two infos of worker 0, want 0 + 2 x concurrency = 4", got)
	}
	r.final.running = true
	r.addWorkers(4) // 5, 6
	for _, w := range r.workers[2:] {
		used = append(used, w.process)
	}
	info(1) // 7
	info(3) // 8
	info(0) // 9
	want := []int{0, 1, 2, 4, 5, 6, 7, 8, 9}
	slices.Sort(used)
	if !slices.Equal(used, want) {
		t.Fatalf("processes %v, want %v (each once)", used, want)
	}
}

// TestFinalWorkers: at least finalWorkersPerNode per node, never fewer
// than the main phase's workers, never more than there are final ops.
func TestFinalWorkers(t *testing.T) {
	for _, c := range []struct{ workers, nodes, ops, want int }{
		{8, 3, 31000, 24},
		{40, 3, 31000, 40},
		{2, 1, 5, 5},
		{2, 1, 1, 2},
		{1, 5, 1000, 40},
	} {
		if got := finalWorkers(c.workers, c.nodes, c.ops); got != c.want {
			t.Errorf("finalWorkers(%d workers, %d nodes, %d ops) = %d, want %d", c.workers, c.nodes, c.ops, got, c.want)
		}
	}
}
