package certs

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Plan is what Write makes.
type Plan struct {
	Dir     string
	Members []string // one certificate each
	// HTTPHosts are the names and addresses clients reach the client
	// endpoints by; empty: no HTTP certificate.
	HTTPHosts []string
	Validity  time.Duration
	Now       time.Time
}

// Write makes the plan's files in Dir (created if needed): the CA (reused
// when Dir already holds one, so a new member can join an existing
// cluster), each member's certificate and key, and the HTTP certificate.
// Keys are written readable by their owner only. It returns one line per
// file, for a person.
func Write(p Plan) ([]string, error) {
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return nil, err
	}
	ca, notes, err := loadOrMakeCA(p)
	if err != nil {
		return nil, err
	}
	for _, id := range p.Members {
		crt, key := MemberFiles(id)
		if err := issueTo(ca, p, []string{id}, nil, crt, key); err != nil {
			return notes, err
		}
		notes = append(notes, fmt.Sprintf("member %s: %s, %s", id, filepath.Join(p.Dir, crt), filepath.Join(p.Dir, key)))
	}
	if len(p.HTTPHosts) > 0 {
		var names []string
		var ips []net.IP
		for _, h := range p.HTTPHosts {
			if ip := net.ParseIP(h); ip != nil {
				ips = append(ips, ip)
			} else {
				names = append(names, h)
			}
		}
		if err := issueTo(ca, p, names, ips, HTTPFile, HTTPKey); err != nil {
			return notes, err
		}
		notes = append(notes, fmt.Sprintf("client endpoints (%v): %s, %s", p.HTTPHosts, filepath.Join(p.Dir, HTTPFile), filepath.Join(p.Dir, HTTPKey)))
	}
	return notes, nil
}

func loadOrMakeCA(p Plan) (*CA, []string, error) {
	ca, err := LoadCA(p.Dir)
	if err == nil {
		return ca, []string{"reusing the CA in " + filepath.Join(p.Dir, CAFile)}, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if ca, err = NewCA("chunklease cluster CA", p.Now, p.Validity); err != nil {
		return nil, nil, err
	}
	crt, key, err := ca.PEM()
	if err != nil {
		return nil, nil, err
	}
	if err := writePair(p.Dir, CAFile, CAKey, crt, key); err != nil {
		return nil, nil, err
	}
	return ca, []string{"new CA: " + filepath.Join(p.Dir, CAFile) + " (its key " + CAKey + " signs member certificates; keep it off the nodes)"}, nil
}

func issueTo(ca *CA, p Plan, names []string, ips []net.IP, crtName, keyName string) error {
	crt, key, err := ca.Issue(names, ips, p.Now, p.Validity)
	if err != nil {
		return err
	}
	return writePair(p.Dir, crtName, keyName, crt, key)
}

func writePair(dir, crtName, keyName string, crt, key []byte) error {
	if err := os.WriteFile(filepath.Join(dir, crtName), crt, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, keyName), key, 0o600)
}
