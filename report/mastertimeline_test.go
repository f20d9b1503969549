package report

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"chunklease/workloads"
	"chunklease/workloads/master"
)

// TestMasterTimelinePage: one lane per node (a node that was never
// master too), a bar per tenure, each node's violation marks on its own
// lane with its tenures there outlined, faults shaded and named, the
// first violations listed with links to their nodes' lanes.
func TestMasterTimelinePage(t *testing.T) {
	v := master.MasterViolation{Kind: master.TwoMasters, Nodes: []string{"n1", "n2"}, Ops: []int{3, 4, 9, 10}, StartNs: 2e9, EndNs: 2.5e9,
		Text: "n1 (status ops 3-4 via n1, ...) and n2 (status ops 9-10 via n2, ...) were both master"}
	res := master.MasterResult{Valid: false, Violations: []master.MasterViolation{v},
		Tenures: []master.MasterTenure{{Node: "n1", StartNs: 1e9, EndNs: 2.5e9, Beliefs: 3, FirstOp: 3, LastOp: 7},
			{Node: "n2", StartNs: 2e9, EndNs: 4e9, Beliefs: 1, FirstOp: 9, LastOp: 9}}}
	faults := []workloads.Fault{{Kind: workloads.FaultPartition, StartNs: 1.5e9, EndNs: math.MaxInt64, Nodes: []string{"n3"}, Detail: "one: n1 n2 | n3"},
		{Kind: workloads.FaultPause, StartNs: 3e9, EndNs: 3.5e9, Detail: "pause "}} // a pause of nobody: not drawn
	in := master.TimelineInputOf(res, []string{"n1", "n2", "n3"}, faults, 5e9, master.MasterDetailsFile)
	var page bytes.Buffer
	if err := WriteMasterTimelinePage(&page, in); err != nil {
		t.Fatal(err)
	}
	c := pageCounts(t, page.Bytes())
	if c["lane"] != 3 || c["violating"] != 2 || c["h"] != 2 || c["x"] != 2 || c["v"] != 2 || c["shade"] != 1 || c["f"] != 1 ||
		c["axis"] != 2 || c["legend"] != 1 || c["violation"] != 1 {
		t.Errorf("element counts %v: want 3 lanes (2 violating), 2 tenures (both in the violation), 2 marks, 1 partition, axes, legend, 1 listed violation", c)
	}
	s := page.String()
	for _, want := range []string{`<span class="verdict-invalid">INVALID</span>`, `id="node-0" data-node="n1"`, `id="node-2" data-node="n3"`,
		`<a href="#node-0">n1</a> <a href="#node-1">n2</a>`, "n1 believed it was master [1.000s, 2.500s): 3 is_master answers merged, status ops 3 to 7",
		"n2 was master together with another node from 2.000s to 2.500s: n1 (status ops 3-4 via n1", ">one: n1 n2 | n3</i>",
		"3 nodes, 2 tenures, 1 violation, 0 history problems, 0 anomalies; 1 partition period, 1 pause that found no node running (not drawn)"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
