package netns

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// TestConnectivity: clients reach every node over TCP, every node reaches
// every other, the program answering is the one Start started (its own
// pid, in the node's namespace), and each member has exactly lo and eth0
// and a route to the lab's subnet only.
func TestConnectivity(t *testing.T) {
	lab := newLab(t, 3)
	servers := map[string]*server{}
	for _, id := range lab.Nodes() {
		n := lab.Node(id)
		s := startEcho(t, n, n.Addr().String()+":7000")
		if got, want := s.ready["pid"], strconv.Itoa(s.cmd.Process.Pid); got != want {
			t.Errorf("%s: the server says pid %s, cmd.Process.Pid is %s", id, got, want)
		}
		if got, want := s.ready["netns"], strconv.FormatUint(n.inode, 10); got != want {
			t.Errorf("%s: the server runs in namespace inode %s, the node's is %s", id, got, want)
		}
		servers[id] = s
	}
	from := append([]*Namespace{lab.Client()}, nodesOf(lab)...)
	for _, src := range from {
		for _, id := range lab.Nodes() {
			dst := lab.Node(id)
			if src == dst {
				continue
			}
			reply, err := echo(src, dst.Addr().String()+":7000", "hello from "+src.ID(), 5*time.Second)
			want := fmt.Sprintf("pid=%d hello from %s", servers[id].cmd.Process.Pid, src.ID())
			if err != nil || reply != want {
				t.Errorf("%s -> %s: got %q, %v; want %q", src.ID(), id, reply, err, want)
			}
		}
	}
	for _, m := range lab.members() {
		checkIsolated(t, m)
	}
}

func nodesOf(lab *Lab) []*Namespace {
	var ns []*Namespace
	for _, id := range lab.Nodes() {
		ns = append(ns, lab.Node(id))
	}
	return ns
}

// checkIsolated: m has lo and eth0 only, one address, and its only
// routes are to the lab's subnet (no default route: nothing can leave).
func checkIsolated(t *testing.T, m *Namespace) {
	t.Helper()
	h, err := netlink.NewHandleAt(m.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"eth0", "lo"}) {
		t.Errorf("%s: links %v, want [eth0 lo]", m.name, names)
	}
	routes, err := h.RouteList(nil, netlink.FAMILY_ALL)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		if r.Dst == nil || r.Dst.String() != labSubnet.String() {
			t.Errorf("%s: route %v leads outside the lab", m.name, r)
		}
	}
	if len(routes) != 1 {
		t.Errorf("%s: %d routes, want the one to %s", m.name, len(routes), labSubnet)
	}
}

// TestDialRefusesOutside: the client dials IP literals inside the lab
// only, so nothing is sent anywhere else.
func TestDialRefusesOutside(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:80", "198.18.1.1:80", "localhost:80", "example.invalid:80", "198.18.0.1"} {
		if err := insideLab(addr); err == nil {
			t.Errorf("insideLab(%q) = nil, want a refusal", addr)
		}
	}
	for _, addr := range []string{"198.18.0.1:7000", "198.18.0.254:1"} {
		if err := insideLab(addr); err != nil {
			t.Errorf("insideLab(%q) = %v", addr, err)
		}
	}
}

// TestHTTPThroughClient: an http.Client whose transport dials with
// Client().DialContext reaches an HTTP server listening in a node, and
// the server sees the client's lab address.
func TestHTTPThroughClient(t *testing.T) {
	lab := newLab(t, 1)
	n1 := lab.Node("n1")
	ln, err := n1.Listen("tcp", n1.Addr().String()+":8080")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.RemoteAddr)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: lab.Client().DialContext}}
	resp, err := client.Get("http://" + n1.Addr().String() + ":8080/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := net.SplitHostPort(string(body))
	if got, _ := netip.ParseAddr(host); got != clientAddr {
		t.Errorf("the server saw the request from %s, want the client %s", host, clientAddr)
	}
	client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := lab.Client().DialContext(ctx, "tcp", "127.0.0.1:8080"); err == nil {
		t.Error("the client dialed 127.0.0.1, outside the lab")
	}
}
