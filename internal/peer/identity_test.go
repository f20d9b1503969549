package peer

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"chunklease/internal/certs"
)

// TestIdentityIsExactlyOneMember: a certificate names its member when
// exactly one of its DNS names is a member id; none or several is
// refused, and the refusal names what the certificate says.
func TestIdentityIsExactlyOneMember(t *testing.T) {
	c := newTestCluster(t, 3)
	members := []string{"n1", "n2", "n3"}
	for _, tc := range []struct {
		names []string
		want  string // member, or a part of the error
	}{
		{[]string{"n2"}, "n2"},
		{[]string{"n2", "n2.example", "localhost"}, "n2"},
		{[]string{"n9"}, "names no member of the cluster n1,n2,n3"},
		{[]string{"n1", "n3"}, "names several members [n1 n3]"},
	} {
		pair := c.cert(tc.names...)
		cert, _ := x509.ParseCertificate(pair.Certificate[0])
		got, err := memberOf(cert, members)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("DNS %v: %q, want %q", tc.names, got, tc.want)
		}
	}
}

// TestOwnCertificateCheck: at start a node learns that its certificate is
// one its peers would refuse (another member's, another CA's).
func TestOwnCertificateCheck(t *testing.T) {
	c := newTestCluster(t, 3)
	other, err := certs.NewCA("other", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	good := Config{Self: "n1", Members: c.members, Cert: c.cert("n1"), CAs: c.pool}
	if err := CheckOwnCertificate(&good); err != nil {
		t.Fatalf("n1's own certificate: %v", err)
	}
	wrong := good
	wrong.Cert = c.cert("n2")
	if err := CheckOwnCertificate(&wrong); err == nil || !strings.Contains(err.Error(), "names member n2, not this node n1") {
		t.Fatalf("n2's certificate as n1: %v", err)
	}
	foreign := good
	crt, key, _ := other.Issue([]string{"n1"}, nil, time.Now(), time.Hour)
	foreign.Cert = mustPair(t, crt, key)
	if err := CheckOwnCertificate(&foreign); err == nil || !strings.Contains(err.Error(), "not one the cluster CA issued") {
		t.Fatalf("another CA's certificate: %v", err)
	}
}
