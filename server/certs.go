package server

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"chunklease/internal/certs"
)

// RunCerts is `lease-node certs`: a cluster CA and member certificates
// made locally with Go's crypto (internal/certs).
func RunCerts(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lease-node certs", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "directory for the files (created; a CA already there is reused)")
	members := fs.String("members", "", "member ids, comma-separated: one certificate each, naming the id as its DNS name")
	hosts := fs.String("http-hosts", "localhost,127.0.0.1,::1", "names and addresses of the client endpoints, for http.crt (client TLS); empty: none")
	days := fs.Int("days", 30, "validity in days")
	err := fs.Parse(args)
	if err == flag.ErrHelp {
		fmt.Fprintf(stdout, "Usage: lease-node certs -dir DIR -members n1,n2,n3 [-http-hosts localhost,127.0.0.1,::1] [-days 30]\n\n"+
			"Makes a cluster CA (DIR/ca.crt, ca.key), a certificate and key per member (DIR/ID.crt, ID.key: the id is\n"+
			"the certificate's only DNS name, for server and client use) and, for HTTPS to clients, DIR/http.crt and\n"+
			"http.key for the -http-hosts. ECDSA P-256, Go's crypto, nothing from the network. With a CA already in\n"+
			"DIR, it issues the new certificates from it (a member joining an existing cluster).\n\nFlags:\n")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0
	}
	ids := splitList(*members)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "lease-node certs: %v (flags: -dir -members -http-hosts -days; -h explains them)\n", err)
		return 2
	case *dir == "":
		fmt.Fprintln(stderr, "lease-node certs: -dir is empty; name the directory for the files, e.g. -dir certs")
		return 2
	case len(ids) == 0 && *hosts == "":
		fmt.Fprintln(stderr, "lease-node certs: -members is empty; list the member ids, e.g. -members n1,n2,n3")
		return 2
	case *days < 1 || *days > 3650:
		fmt.Fprintf(stderr, "lease-node certs: -days is %d; want 1..3650\n", *days)
		return 2
	}
	notes, err := certs.Write(certs.Plan{Dir: *dir, Members: ids, HTTPHosts: splitList(*hosts),
		Validity: time.Duration(*days) * 24 * time.Hour, Now: time.Now()})
	for _, n := range notes {
		fmt.Fprintln(stdout, n)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lease-node certs: %v\n", err)
		return 1
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
