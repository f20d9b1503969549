package master

import (
	"testing"
	"time"

	"chunklease/internal/testseed"
	"chunklease/workloads"
	"chunklease/workloads/workloadtest"
)

// TestMasterAnalysisMatchesCheckMaster: the master analysis of a history
// read back from disk reaches CheckMaster's verdict and MasterStats's
// figures.
func TestMasterAnalysisMatchesCheckMaster(t *testing.T) {
	seed := int64(testseed.Get(t))
	svc := newIdealMaster(seed, 5)
	svc.lossRate, svc.failRate = 0.02, 0.02
	svc.outages = []workloads.Interval{{StartNs: 3e9, EndNs: 5e9}, {StartNs: 9e9, EndNs: 10e9}}
	ops := masterSimRun(t, svc, seed, 15*time.Second)
	got := workloadtest.Analyze(t, NewMaster(MasterOptions{}, 1), ops, t.TempDir(), 99)
	res := CheckMaster(ops)
	if g, w := workloadtest.JSONOf(t, got.Result.Details), workloadtest.JSONOf(t, res); g != w {
		t.Errorf("result:\n%.800s\nwant:\n%.800s", g, w)
	}
	if g, w := workloadtest.JSONOf(t, got.Stats), workloadtest.JSONOf(t, MasterStats(ops, res.Tenures, 99)); g != w {
		t.Errorf("statistics:\n%s\nwant:\n%s", g, w)
	}
}
