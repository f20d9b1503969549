package master

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"chunklease/history"
	"chunklease/internal/testseed"
	"chunklease/workloads"
)

// TestMasterMixAndStagger: ops follow the stagger (first at 0, gaps in
// [0, 2/rate)) and the default mix, with null invoke values.
func TestMasterMixAndStagger(t *testing.T) {
	seed := int64(testseed.Get(t))
	const rate, n = 50.0, 20000
	w := NewMaster(MasterOptions{Rate: rate}, seed)
	if w.Wake() != 0 {
		t.Fatalf("first op due at %v, want 0", w.Wake())
	}
	counts := map[string]int{}
	prev := time.Duration(0)
	maxGap := time.Duration(2 * float64(time.Second) / rate)
	for i := range n {
		now := w.Wake()
		if gap := now - prev; gap < 0 || gap >= maxGap {
			t.Fatalf("gap %v outside [0, %v)", gap, maxGap)
		}
		if _, ok := w.Next(now-1, i); ok && now > 0 {
			t.Fatalf("op emitted before it was due (%v < %v)", now-1, now)
		}
		inv, ok := w.Next(now, i%10)
		if !ok {
			t.Fatalf("no op at its due time %v", now)
		}
		if inv.Value != nil {
			t.Fatalf("invoke value %s, want null", inv.Value)
		}
		counts[inv.F]++
		prev = now
	}
	mix := DefaultMasterMix()
	for f, want := range map[string]float64{FMasterStatus: mix.Status, FMasterStart: mix.Start, FMasterStop: mix.Stop} {
		got := float64(counts[f]) / n
		if math.Abs(got-want) > 0.015 {
			t.Errorf("%s share %.3f, want about %.3f", f, got, want)
		}
	}
	if len(counts) != 3 {
		t.Errorf("f values %v, want only start, stop and status", counts)
	}
	if _, ok := NewMaster(MasterOptions{}, seed).Next(time.Hour, 0); ok {
		t.Error("rate 0 produced an op")
	}
}

func TestMasterCustomMixAndDeterminism(t *testing.T) {
	seed := int64(testseed.Get(t))
	only := NewMaster(MasterOptions{Rate: 100, Mix: MasterMix{Start: 1}}, seed)
	for range 200 {
		if inv, _ := only.Next(only.Wake(), 0); inv.F != FMasterStart {
			t.Fatalf("mix {start: 1} gave %s", inv.F)
		}
	}
	run := func(s int64) string {
		w := NewMaster(MasterOptions{Rate: 100}, s)
		var b strings.Builder
		for range 300 {
			now := w.Wake()
			inv, _ := w.Next(now, 0)
			b.WriteString(inv.F + "@" + now.String() + " ")
		}
		return b.String()
	}
	if run(seed) != run(seed) {
		t.Error("the same seed gave different ops")
	}
	if run(seed) == run(seed+1) {
		t.Error("different seeds gave the same ops")
	}
}

func TestMasterOptionsValidate(t *testing.T) {
	good := []MasterOptions{{}, {Rate: 5}, {Rate: 1, Mix: MasterMix{Status: 3}}, {LeaseMs: 1}}
	for _, o := range good {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	bad := map[string]MasterOptions{
		"rate must be":           {Rate: -1},
		"rate must be a finite":  {Rate: math.Inf(1)},
		"mix weight stop":        {Mix: MasterMix{Status: 1, Stop: -0.5}},
		"mix weight start":       {Mix: MasterMix{Start: math.NaN()}},
		"mix weight status must": {Mix: MasterMix{Status: math.Inf(1)}},
		"lease length must be":   {LeaseMs: -1},
	}
	for want, o := range bad {
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: error %v, want one mentioning %q", o, err, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("NewMaster accepted a negative rate")
		}
	}()
	NewMaster(MasterOptions{Rate: -1}, 1)
}

// TestMasterLeaseBound: the master workload's lease length is the
// nodes' own (NodeLeased), LeaseMs or by default 1000 ms, and the
// harness's bound for them (LeaseBounded).
func TestMasterLeaseBound(t *testing.T) {
	for opts, want := range map[MasterOptions]int64{{}: DefaultMasterLeaseMs, {LeaseMs: 250}: 250} {
		w := NewMaster(opts, 1)
		if got := workloads.LongestLeaseMs(w); got != want || !workloads.HasNodeLeases(w) {
			t.Errorf("%+v: longest lease %d, node leases %t; want %d, true", opts, got, workloads.HasNodeLeases(w), want)
		}
	}
}

func TestMasterRequests(t *testing.T) {
	w := NewMaster(MasterOptions{Rate: 1}, 1)
	for f, want := range map[string]string{
		FMasterStart: `{"type":"master_start"}`, FMasterStop: `{"type":"master_stop"}`,
		FMasterStatus: `{"type":"master_status"}`, `we"ird`: `{"type":"master_we\"ird"}`,
	} {
		if got := string(w.Request(workloads.Invocation{F: f})); got != want {
			t.Errorf("request for %q: %s, want %s", f, got, want)
		}
	}
}

func TestMasterCompleteOK(t *testing.T) {
	w := NewMaster(MasterOptions{Rate: 1}, 1)
	cases := []struct{ f, reply, value string }{
		{FMasterStatus, `{"type":"master_status_ok","is_master":true,"master":"n1","remaining_ms":750,"token":9007199254740991,"msg_id":4,"in_reply_to":2}`,
			`{"is_master":true,"master":"n1","remaining_ms":750,"token":9007199254740991}`},
		{FMasterStatus, `{"type":"master_status_ok","is_master":true,"master":"n1","remaining_ms":750,"in_reply_to":2}`,
			`{"is_master":true,"master":"n1","remaining_ms":750}`},
		{FMasterStatus, `{"type":"master_status_ok","is_master":false,"master":null,"remaining_ms":0,"in_reply_to":2}`,
			`{"is_master":false,"master":null,"remaining_ms":0}`},
		{FMasterStart, `{"type":"master_start_ok","msg_id":0,"in_reply_to":1}`, ``},
		{FMasterStop, `{"type":"master_stop_ok","in_reply_to":1}`, ``},
	}
	for _, c := range cases {
		got := w.Complete(0, 0, workloads.Invocation{F: c.f}, json.RawMessage(c.reply))
		if got.Type != history.OK || got.Error != "" || string(got.Value) != c.value {
			t.Errorf("%s reply %s: completion %s %q value %s, want ok %s", c.f, c.reply, got.Type, got.Error, got.Value, c.value)
		}
	}
}

// TestMasterClosedSchemas: every way a reply can break its schema is info
// naming the schema and the violation.
func TestMasterClosedSchemas(t *testing.T) {
	status := func(fields string) string {
		return `{"type":"master_status_ok","in_reply_to":1` + fields + `}`
	}
	full := `,"is_master":true,"master":"n1","remaining_ms":5`
	cases := []struct{ f, reply, want string }{
		{FMasterStatus, status(full + `,"term":3`), `disallowed key "term"`},
		{FMasterStatus, status(full + `,"token":0`), "token is 0, want an integer > 0"},
		{FMasterStatus, status(full + `,"token":-4`), "token is -4, want an integer > 0"},
		{FMasterStatus, status(full + `,"token":"12"`), `token is "12", want an integer > 0`},
		{FMasterStatus, status(full + `,"token":null`), "token is null, want an integer > 0"},
		{FMasterStatus, status(`,"master":"n1","remaining_ms":5`), "is_master is missing, want true or false"},
		{FMasterStatus, status(`,"is_master":"true","master":"n1","remaining_ms":5`), `is_master is "true", want true or false`},
		{FMasterStatus, status(`,"is_master":1,"master":"n1","remaining_ms":5`), "is_master is 1, want true or false"},
		{FMasterStatus, status(`,"is_master":true,"remaining_ms":5`), "master is missing, want a node id or null"},
		{FMasterStatus, status(`,"is_master":true,"master":7,"remaining_ms":5`), "master is 7, want a node id or null"},
		{FMasterStatus, status(`,"is_master":true,"master":"","remaining_ms":5`), `master is "", want a node id or null`},
		{FMasterStatus, status(`,"is_master":true,"master":"n1"`), "remaining_ms is missing, want an integer >= 0"},
		{FMasterStatus, status(`,"is_master":true,"master":"n1","remaining_ms":5.0`), "remaining_ms is 5.0, want an integer >= 0"},
		{FMasterStatus, status(`,"is_master":true,"master":"n1","remaining_ms":-1`), "remaining_ms is -1, want an integer >= 0"},
		{FMasterStatus, status(full + `,"msg_id":"9"`), `msg_id is "9", want an integer`},
		{FMasterStatus, `{"type":"master_status_ok"` + full + `}`, "in_reply_to is missing, want an integer"},
		{FMasterStatus, `{"type":"master_start_ok","in_reply_to":1}`, `type is "master_start_ok", want "master_status_ok"`},
		{FMasterStatus, `{"in_reply_to":1` + full + `}`, `type is missing, want "master_status_ok"`},
		{FMasterStatus, `[1]`, "body is not a JSON object"},
		{FMasterStart, `{"type":"master_start_ok","in_reply_to":1,"is_master":true}`, `disallowed key "is_master"`},
		{FMasterStop, `{"type":"master_start_ok","in_reply_to":1}`, `type is "master_start_ok", want "master_stop_ok"`},
		{FMasterStop, `{"type":"master_stop_ok","in_reply_to":1.5}`, "in_reply_to is 1.5, want an integer"},
	}
	w := NewMaster(MasterOptions{Rate: 1}, 1)
	for _, c := range cases {
		got := w.Complete(0, 0, workloads.Invocation{F: c.f}, json.RawMessage(c.reply))
		schema := "master_" + c.f + "_ok schema {"
		if got.Type != history.Info || !strings.Contains(got.Error, c.want) || !strings.Contains(got.Error, schema) ||
			!strings.HasPrefix(got.Error, "malformed-rpc-response: ") {
			t.Errorf("%s reply %s: completion %s %q, want info naming %q and %q", c.f, c.reply, got.Type, got.Error, schema, c.want)
		}
	}
	if got := w.Complete(0, 0, workloads.Invocation{F: "elect"}, json.RawMessage(`{"type":"master_elect_ok"}`)); got.Type != history.Info ||
		!strings.Contains(got.Error, `no f "elect"`) {
		t.Errorf("unknown f: %+v", got)
	}
}

// TestMasterErrorsAndTimeouts: status is a read, so every error and a
// timeout fail it; start and stop follow the error table.
func TestMasterErrorsAndTimeouts(t *testing.T) {
	w := NewMaster(MasterOptions{Rate: 1}, 1)
	unavailable := json.RawMessage(`{"type":"error","in_reply_to":1,"code":11,"text":"no quorum"}`)
	timeout := json.RawMessage(`{"type":"error","in_reply_to":1,"code":0,"text":"no majority in time"}`)
	cases := []struct {
		f     string
		reply json.RawMessage
		typ   string
		err   string
	}{
		{FMasterStatus, nil, history.Fail, workloads.TimeoutError},
		{FMasterStart, nil, history.Info, workloads.TimeoutError},
		{FMasterStop, nil, history.Info, workloads.TimeoutError},
		{FMasterStatus, timeout, history.Fail, "timeout: no majority in time"},
		{FMasterStart, timeout, history.Info, "timeout: no majority in time"},
		{FMasterStop, unavailable, history.Fail, "temporarily-unavailable: no quorum"},
		{FMasterStatus, json.RawMessage(`{"type":"error","code":10,"text":"unsupported"}`), history.Fail, "not-supported: unsupported"},
	}
	for _, c := range cases {
		got := w.Complete(0, 0, workloads.Invocation{F: c.f}, c.reply)
		if got.Type != c.typ || got.Error != c.err || got.Value != nil {
			t.Errorf("%s reply %s: %+v, want %s %q with a null value", c.f, c.reply, got, c.typ, c.err)
		}
	}
}
