package history

import (
	"encoding/json"
	"reflect"
	"testing"
)

var opLineSeeds = []string{
	`{"index":0,"time":123456789,"process":3,"type":"invoke","f":"grant","node":"n1","value":{"chunk":"ch_2","server":"cs3","lease_ms":1000}}`,
	`{"index":1,"time":125000000,"process":3,"type":"ok","f":"grant","node":"n1","value":{"chunk":"ch_2","server":"cs3","lease_ms":1000,"primary":"cs3","expires_in_ms":998,"token":17}}`,
	`{"index":2,"time":5,"process":"nemesis","type":"info","f":"start-partition","value":["isolated",{"n1":["n2"]}]}`,
	`{"index":3,"time":6,"process":4,"type":"info","f":"check","node":"n2","value":{"chunk":"ch_1"},"error":"net-timeout"}`,
	`{"index":4,"time":7,"process":0,"type":"invoke","f":"echo","value":"Please echo 35"}`,
	`{"index":5,"time":8,"process":1,"type":"ok","f":"status","node":"n3","value":{"is_master":true,"master":"n3","remaining_ms":500}}`,
	`{"index":6,"time":9,"process":2,"type":"invoke","f":"start","value":null}`,
	` { "index" : 7 , "time" : 1 , "process" : 1 , "type" : "ok" , "f" : "x" , "value" : { } } ` + "\n",
	`{"index":8,"time":1,"process":1,"type":"ok","f":"x","value":{"a":"\u00e9"}}`,
	`{"Index":0,"time":1,"process":1,"type":"ok","f":"x"}`, `{"index":0,"index":1,"time":1,"process":1,"type":"ok","f":"x"}`,
	`{"index":null,"time":1,"process":1,"type":"ok","f":"x"}`, `{"index":1.0,"time":1,"process":1,"type":"ok","f":"x"}`,
	`{"index":0,"time":-1,"process":1,"type":"ok","f":"x"}`, `{"index":0,"time":1,"process":"3","type":"ok","f":"x"}`,
	`{"index":0,"time":1,"process":null,"type":"ok","f":"x"}`, `{"index":0,"time":1,"process":1,"type":null,"f":"x"}`,
	`{"index":0,"time":1,"process":1,"type":"ok","f":"x","node":null,"error":null}`, `{"index":0,"time":1,"process":1,"type":"ok","f":""}`,
	`{"index":0,"time":1,"process":99999999999999999999,"type":"ok","f":"x"}`, `{"index":0,"time":1,"process":1,"type":"ok","f":"x","extra":{"a":[1]}}`,
	`{"index":0,"time":1,"process":1,"type":"ok","f":"x"} x`, `{"index":0,"time":1,"process":1,"type":"ok","f":"x",}`, `{}`, `[]`, `null`, ``,
	`{"index":0,"time":1,"process":1,"type":"ok","f":"x","value":{"a":1,"a":2}}`, `{"index":0,"time":1,"process":1,"type":"ok","f":"x","value":{"a":{}}}`,
	`{"index":0,"time":1,"process":1,"type":"ok","f":"x","value":{"a":1,}}`, `{"index":0,"time":1,"process":-0,"type":"ok","f":"x","value":tru}`,
}

// FuzzOpLine holds the fast op-line decoder to encoding/json: the same
// fields when both succeed, and an error exactly when encoding/json errs.
func FuzzOpLine(f *testing.F) {
	for _, s := range opLineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast opFields
		fastOK := scanOpLine(b, &fast)
		var w wireOp
		wantErr := json.Unmarshal(b, &w)
		if !fastOK {
			return // the slow path is encoding/json itself
		}
		if wantErr != nil {
			t.Fatalf("scanOpLine accepted %q, which encoding/json rejects: %v", b, wantErr)
		}
		want := opFields{op: Op{Node: w.Node, Value: w.Value, Error: w.Error}, hasIndex: w.Index != nil, hasTime: w.Time != nil,
			hasProcess: w.Process != nil, hasType: w.Type != nil, hasF: w.F != nil}
		if w.Index != nil {
			want.op.Index = *w.Index
		}
		if w.Time != nil {
			want.op.Time = *w.Time
		}
		if w.Process != nil {
			want.op.Process = *w.Process
		}
		if w.Type != nil {
			want.op.Type = *w.Type
		}
		if w.F != nil {
			want.op.F = *w.F
		}
		if !reflect.DeepEqual(fast, want) {
			t.Errorf("scanOpLine(%q) = %+v; encoding/json: %+v", b, fast, want)
		}
	})
}

// TestOpLineFastPathIsTaken: the lines the Writer writes for client ops
// take the fast path.
func TestOpLineFastPathIsTaken(t *testing.T) {
	for _, i := range []int{0, 1, 3, 4, 5, 6, 7} {
		var f opFields
		if !scanOpLine([]byte(opLineSeeds[i]), &f) {
			t.Errorf("%s fell back to encoding/json", opLineSeeds[i])
		}
	}
}
