package main

import (
	"bytes"
	"chunklease/internal/nodeconfig"
	"strings"
	"testing"
)

// TestHelpListsEverySetting: -h is a help a person can use: it exits 0 and
// names every flag with its environment variable, default and meaning.
func TestHelpListsEverySetting(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		var out, errOut bytes.Buffer
		code := run([]string{arg}, strings.NewReader(""), &out, &errOut, func(string) string { return "" })
		if code != 0 || errOut.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q; want 0 and nothing", arg, code, errOut.String())
		}
		for _, s := range nodeconfig.Settings {
			for _, want := range []string{"-" + s.Flag + " ", "env " + s.Env, "default " + s.Def, s.Usage} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("%s: the help lacks %q", arg, want)
				}
			}
		}
	}
}

// TestUnknownAcceptorIsExplained: an acceptor list naming a node outside
// node_ids fails init with a message naming the unknown id, the real
// node_ids and the fix.
func TestUnknownAcceptorIsExplained(t *testing.T) {
	c, err := parseConfig(nil, func(k string) string {
		if k == "LEASE_ACCEPTORS" {
			return "n1,n9"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.AcceptorList([]string{"n0", "n1", "n2"}, "n1")
	if err == nil {
		t.Fatal("n9 outside node_ids was accepted")
	}
	for _, want := range []string{`"n1,n9"`, "n9 is not a node of this cluster", "[n0 n1 n2]", "Set it to all, self, or a comma list"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q lacks %q", err, want)
		}
	}
}
