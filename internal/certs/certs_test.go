package certs

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestWriteMakesAWorkingCluster: the files parse, each member's
// certificate chains to the CA for both TLS uses and names exactly its
// id, the HTTP certificate names the hosts and addresses, keys are
// readable by their owner only; a second Write reuses the CA.
func TestWriteMakesAWorkingCluster(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	notes, err := Write(Plan{Dir: dir, Members: []string{"n1", "n2"}, HTTPHosts: []string{"localhost", "127.0.0.1"}, Validity: 24 * time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 4 {
		t.Fatalf("notes %q: want the CA, two members, the HTTP certificate", notes)
	}
	ca, err := LoadCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for _, id := range []string{"n1", "n2"} {
		crt, key := MemberFiles(id)
		leaf := loadLeaf(t, filepath.Join(dir, crt), filepath.Join(dir, key))
		for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: id, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
				t.Fatalf("%s for usage %v: %v", id, usage, err)
			}
		}
		if !slices.Equal(leaf.DNSNames, []string{id}) || len(leaf.IPAddresses) != 0 || leaf.NotAfter.After(now.Add(25*time.Hour)) {
			t.Fatalf("%s: DNS %v, IPs %v, not after %v", id, leaf.DNSNames, leaf.IPAddresses, leaf.NotAfter)
		}
		if fi, _ := os.Stat(filepath.Join(dir, key)); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s's key has mode %v", id, fi.Mode())
		}
	}
	web := loadLeaf(t, filepath.Join(dir, HTTPFile), filepath.Join(dir, HTTPKey))
	if err := web.VerifyHostname("127.0.0.1"); err != nil || !web.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Fatalf("http.crt: %v %v", web.IPAddresses, err)
	}
	if _, err := Write(Plan{Dir: dir, Members: []string{"n3"}, Validity: time.Hour, Now: now}); err != nil {
		t.Fatal(err)
	}
	again, err := LoadCA(dir)
	if err != nil || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("a second Write did not reuse the CA (%v)", err)
	}
	crt, key := MemberFiles("n3")
	if _, err := loadLeaf(t, filepath.Join(dir, crt), filepath.Join(dir, key)).Verify(x509.VerifyOptions{Roots: pool, DNSName: "n3"}); err != nil {
		t.Fatalf("n3, issued later, does not chain to the same CA: %v", err)
	}
}

func loadLeaf(t *testing.T, crt, key string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}
