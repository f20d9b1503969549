package nodeconfig

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		check   func(Node) bool
		wantErr string
	}{
		{"defaults", nil, env(), func(c Node) bool {
			return c.LeaseMs == 60000 && c.MaxLeaseMs == 60000 && c.Acceptors == "all" && c.QuorumTimeoutMs == 2000 && c.DriftPPM == 1000
		}, ""},
		{"environment", nil, env("LEASE_MS", "1000", "LEASE_ACCEPTORS", "self"), func(c Node) bool {
			return c.LeaseMs == 1000 && c.Acceptors == "self"
		}, ""},
		{"a flag wins over the environment", []string{"-lease-ms", "2000"}, env("LEASE_MS", "1000"), func(c Node) bool {
			return c.LeaseMs == 2000
		}, ""},
		{"a fixed acceptor list", []string{"-acceptors", "n1,n2,n3"}, env(), func(c Node) bool {
			return c.Acceptors == "n1,n2,n3"
		}, ""},
		{"not a number", nil, env("LEASE_MS", "1s"), nil, `-lease-ms (LEASE_MS) is "1s"; want a whole number in 1..604800000`},
		{"in flight", nil, env("LEASE_MAX_IN_FLIGHT", "16"), func(c Node) bool { return c.MaxInFlight == 16 }, ""},
		{"no request in flight", []string{"-max-in-flight", "0"}, env(), nil, "-max-in-flight (LEASE_MAX_IN_FLIGHT) is \"0\"; want a whole number in 1..1000000"},
		{"quorum timeout above 2000", []string{"-quorum-timeout-ms", "2001"}, env(), nil, "-quorum-timeout-ms (LEASE_QUORUM_TIMEOUT_MS)"},
		{"lease above the maximum", []string{"-lease-ms", "70000"}, env(), nil, "-lease-ms (LEASE_MS) 70000 is more than -max-lease-ms (LEASE_MAX_MS) 60000"},
		{"margin as long as the lease", []string{"-lease-ms", "100", "-drift-margin-ms", "100"}, env(), nil, "must be less than -lease-ms 100"},
		{"acceptor listed twice", []string{"-acceptors", "n1,n1"}, env(), nil, "lists n1 twice"},
		{"negative boot wait", nil, env("LEASE_BOOT_WAIT_MS", "-1"), nil, "-boot-wait-ms (LEASE_BOOT_WAIT_MS)"},
		{"unknown flag", []string{"-lease", "5"}, env(), nil, "flag provided but not defined: -lease"},
		{"stray argument", []string{"extra"}, env(), nil, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		c, err := Parse("lease-node", tt.args, tt.getenv)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tt.name, err)
		case tt.wantErr == "" && !tt.check(c):
			t.Errorf("%s: got %+v", tt.name, c)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.wantErr)
		}
	}
}
