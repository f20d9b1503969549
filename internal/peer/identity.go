package peer

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A member's identity is its certificate: signed by the cluster CA and
// naming exactly one member id among its DNS names (the id is a DNS name
// of the certificate, so no certificate needs an IP address, and the
// same files work on loopback and inside network namespaces). What a
// frame says never identifies its sender; the connection's certificate
// does.

// memberOf returns the one member id cert names.
func memberOf(cert *x509.Certificate, members []string) (string, error) {
	var found []string
	for _, name := range cert.DNSNames {
		if slices.Contains(members, name) && !slices.Contains(found, name) {
			found = append(found, name)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("certificate %s names no member of the cluster %s", describeCert(cert), strings.Join(members, ","))
	}
	return "", fmt.Errorf("certificate %s names several members %v; a member certificate names exactly one", describeCert(cert), found)
}

// describeCert names a certificate in a log line: its DNS names and
// subject, whatever it claims.
func describeCert(cert *x509.Certificate) string {
	return fmt.Sprintf("DNS %v (subject %q, issuer %q)", cert.DNSNames, cert.Subject.CommonName, cert.Issuer.CommonName)
}

// serverTLS is the listening side: every peer must present a certificate
// the cluster CA signed for client use that names one member. The check
// runs in VerifyConnection, so that a refusal's error names what the
// peer presented even when the CA is not ours.
func serverTLS(cfg *Config, members []string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cfg.Cert},
		ClientAuth:   tls.RequireAnyClientCert,
		VerifyConnection: func(cs tls.ConnectionState) error {
			_, err := verifyPeer(cs.PeerCertificates, cfg.CAs, members, x509.ExtKeyUsageClientAuth)
			return err
		},
	}
}

// clientTLS is the dialing side towards member id: the server must
// present a certificate the cluster CA signed naming id (ServerName), and
// no other member.
func clientTLS(cfg *Config, id string, members []string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cfg.Cert},
		RootCAs:      cfg.CAs,
		ServerName:   id,
		VerifyConnection: func(cs tls.ConnectionState) error {
			got, err := verifyPeer(cs.PeerCertificates, cfg.CAs, members, x509.ExtKeyUsageServerAuth)
			if err == nil && got != id {
				err = fmt.Errorf("dialled member %s but its certificate names member %s", id, got)
			}
			return err
		},
	}
}

// verifyPeer checks a presented chain against the cluster CA for usage
// and returns the member it names.
func verifyPeer(chain []*x509.Certificate, cas *x509.CertPool, members []string, usage x509.ExtKeyUsage) (string, error) {
	if len(chain) == 0 {
		return "", errors.New("no certificate presented")
	}
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	opts := x509.VerifyOptions{Roots: cas, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}}
	if _, err := leaf.Verify(opts); err != nil {
		return "", fmt.Errorf("certificate %s is not one the cluster CA issued for this use: %v", describeCert(leaf), err)
	}
	return memberOf(leaf, members)
}

// CheckOwnCertificate tells at start whether this member's certificate
// would be accepted by its peers: signed by the CA, for both uses, naming
// self and no other member.
func CheckOwnCertificate(cfg *Config) error {
	leaf := cfg.Cert.Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Cert.Certificate[0]); err != nil {
			return err
		}
	}
	chain := []*x509.Certificate{leaf}
	for _, der := range cfg.Cert.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return err
		}
		chain = append(chain, c)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		id, err := verifyPeer(chain, cfg.CAs, cfg.memberIDs(), usage)
		if err != nil {
			return err
		}
		if id != cfg.Self {
			return fmt.Errorf("certificate %s names member %s, not this node %s", describeCert(leaf), id, cfg.Self)
		}
	}
	return nil
}
