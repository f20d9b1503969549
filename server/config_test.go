package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chunklease/internal/certs"
	"chunklease/internal/nodeconfig"
)

// TestServeRefusesBadConfiguration: every bad or inconsistent setting
// stops serve at start with exit status 2 and one line on stderr naming
// the setting (and the fix), before anything listens.
func TestServeRefusesBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	if _, err := certs.Write(certs.Plan{Dir: dir, Members: []string{"n1", "n2", "n3"}, Validity: time.Hour, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	f := func(name string) string { return filepath.Join(dir, name) }
	cluster := "n1=127.0.0.1:1,n2=127.0.0.1:2,n3=127.0.0.1:3"
	good := []string{"-id", "n1", "-cluster", cluster, "-client-addr", "127.0.0.1:0", "-tls-ca", f("ca.crt"), "-tls-cert", f("n1.crt"), "-tls-key", f("n1.key")}
	with := func(extra ...string) []string { return append(append([]string{}, good...), extra...) }
	tokenFile := f("token")
	os.WriteFile(tokenFile, []byte("abc"), 0o600)
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"no cluster", []string{"-id", "n1"}, nil, []string{"-cluster (LEASE_CLUSTER) is empty", "id=host:port"}},
		{"no id", []string{"-cluster", cluster}, nil, []string{"-id (LEASE_NODE_ID) is empty", "n1, n2, n3"}},
		{"id outside", with("-id", "n9"), nil, []string{"-id (LEASE_NODE_ID) is \"n9\"", "does not list"}},
		{"id twice", with("-cluster", "n1=127.0.0.1:1,n1=127.0.0.1:2"), nil, []string{"lists n1 twice"}},
		{"bad address", with("-cluster", "n1=localhost,n2=127.0.0.1:2"), nil, []string{"-cluster (LEASE_CLUSTER) address of n1", "host:port"}},
		{"same address", with("-cluster", "n1=127.0.0.1:1,n2=127.0.0.1:1"), nil, []string{"the same address"}},
		{"no client address", with("-client-addr", ""), nil, []string{"-client-addr (LEASE_CLIENT_ADDR) is empty"}},
		{"short boot wait", with("-boot-wait-ms", "500"), nil, []string{"-boot-wait-ms (LEASE_BOOT_WAIT_MS) is 500", "below -max-lease-ms"}},
		{"short boot wait by env", good, map[string]string{"LEASE_BOOT_WAIT_MS": "10", "LEASE_MAX_MS": "1000"}, []string{"-boot-wait-ms (LEASE_BOOT_WAIT_MS) is 10"}},
		{"acceptors self", with("-acceptors", "self"), nil, []string{"-acceptors (LEASE_ACCEPTORS) self", "with 3 members"}},
		{"acceptor outside", with("-acceptors", "n1,n7"), nil, []string{"-acceptors (LEASE_ACCEPTORS)", "n7 is not a node"}},
		{"lease above max", with("-lease-ms", "9000", "-max-lease-ms", "5000"), nil, []string{"-lease-ms (LEASE_MS) 9000 is more than -max-lease-ms"}},
		{"no TLS", []string{"-id", "n1", "-cluster", cluster, "-client-addr", "127.0.0.1:0"}, nil, []string{"-tls-ca (LEASE_TLS_CA) is not set", "lease-node certs"}},
		{"another member's certificate", with("-tls-cert", f("n2.crt"), "-tls-key", f("n2.key")), nil, []string{"-tls-cert (LEASE_TLS_CERT)", "names member n2, not this node n1"}},
		{"key of another certificate", with("-tls-key", f("n2.key")), nil, []string{"-tls-cert/-tls-key"}},
		{"client TLS half", with("-client-tls-cert", f("n1.crt")), nil, []string{"-client-tls-cert and -client-tls-key", "set both"}},
		{"two tokens", with("-client-token-file", tokenFile), map[string]string{"LEASE_CLIENT_TOKEN": "x"}, []string{"set one"}},
		{"token with a space", good, map[string]string{"LEASE_CLIENT_TOKEN": "a b"}, []string{"client token", "without spaces"}},
		{"not a number", with("-quorum-timeout-ms", "soon"), nil, []string{"-quorum-timeout-ms (LEASE_QUORUM_TIMEOUT_MS) is \"soon\""}},
		{"unknown flag", with("-peers", "x"), nil, []string{"flag provided but not defined: -peers", "-cluster"}},
		{"no loops", with("-loops", "0"), nil, []string{"-loops (LEASE_LOOPS) is \"0\"", "1..64", "GOMAXPROCS"}},
		{"too many loops", good, map[string]string{"LEASE_LOOPS": "65"}, []string{"-loops (LEASE_LOOPS) is \"65\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(tc.args, &out, &errOut, func(k string) string { return tc.env[k] })
			line := errOut.String()
			if code != 2 || strings.Count(line, "\n") != 1 || !strings.HasPrefix(line, "lease-node serve: ") {
				t.Fatalf("exit %d, stderr %q: want 2 and one line", code, line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("the line %q lacks %q", line, w)
				}
			}
		})
	}
}

// TestServeHelpListsEverySetting: serve -h exits 0 and names every flag
// with its environment variable, the token's variable, the signals and
// the boot wait's default.
func TestServeHelpListsEverySetting(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run([]string{"-h"}, &out, &errOut, func(string) string { return "" }); code != 0 || errOut.Len() != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	for _, table := range [][]nodeconfig.Setting{nodeconfig.Settings, serveSettings} {
		for _, s := range table {
			for _, want := range []string{"-" + s.Flag + " ", "env " + s.Env, s.Usage} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("the help lacks %q", want)
				}
			}
		}
	}
	for _, want := range []string{tokenEnv, "SIGTERM", "-boot-wait-ms  (env LEASE_BOOT_WAIT_MS, default -max-lease-ms)", "-loops  (env LEASE_LOOPS, default GOMAXPROCS)",
		"/readyz", "/metrics"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the help lacks %q", want)
		}
	}
}
