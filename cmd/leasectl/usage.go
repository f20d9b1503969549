package main

// usage is `leasectl -h`.
const usage = `leasectl: take, hold and give back chunk leases from a lease-node serve cluster.

Usage:
  leasectl [flags] grant [-lease-ms N] CHUNK SERVER    take a lease for SERVER
  leasectl [flags] renew [-lease-ms N] CHUNK SERVER    extend SERVER's lease (a new, larger token)
  leasectl [flags] check CHUNK                         who holds CHUNK, and for how long
  leasectl [flags] release CHUNK SERVER TOKEN          give the lease back: ends SERVER's instances with token <= TOKEN
  leasectl [flags] master start|stop|status [-node N]  a node's master campaign, or its master status
  leasectl [flags] keep [-lease-ms N] CHUNK SERVER     hold a lease until interrupted, a line at each renewal
  leasectl [flags] member list|add|remove [ID]         the acceptor set (clusters started with -membership on)
  leasectl COMMAND -h                                  one command's help

Flags (before or after the command):
  -endpoints URLS    the members' client URLs, comma-separated (default $LEASE_ENDPOINTS, else $ENDPOINTS)
  -token-file FILE   a file holding the bearer token (default $LEASE_CLIENT_TOKEN_FILE; or $LEASE_CLIENT_TOKEN holds the token)
  -ca-file FILE      the CA of the members' HTTPS certificates (default $LEASE_CA_FILE)
  -timeout D         how long one call may take, failover included (default 5s)

Output: one line per call on stdout, key=value after the verb, e.g.
  granted ch_1 to cs1 token=123 expires_in_ms=4998
  held ch_1 by cs2 token=120 expires_in_ms=3000
  renewed ch_1 for cs1 token=124 expires_in_ms=4998
  check ch_1 primary=cs1 remaining_ms=4000 expired=false
  released ch_1 for cs1 token=124
  master status node=http://127.0.0.1:7001 is_master=true master=n1 remaining_ms=812 token=125
  member removed n3 epoch=1 members=n1,n2 next_change_in_ms=60119
Errors: one line on stderr, starting "leasectl: ".

Exit status:
  0  done
  1  refused: nothing was done (400, 401, 404, 409, 503, no member reachable),
     or the chunk is held by another server, or keep lost the lease
  2  bad usage: a flag, an argument, or a setting in the environment
  3  unknown outcome (504, a connection broken after sending): it may have taken effect

A local cluster (scripts/cluster.sh prints ENDPOINTS=... on its last line):
  export "$(scripts/cluster.sh up | tail -n1)"
  leasectl grant ch_1 cs1
  leasectl keep -lease-ms 300 ch_1 cs1      # Ctrl-C gives it back
`

// commandArgs name each command's arguments, for errors.
var commandArgs = map[string]string{
	"grant":   "CHUNK SERVER",
	"renew":   "CHUNK SERVER",
	"check":   "CHUNK",
	"release": "CHUNK SERVER TOKEN",
	"master":  "start, stop or status",
	"keep":    "CHUNK SERVER",
	"member":  "list, or add ID or remove ID",
}

// commandUsage is `leasectl COMMAND -h`.
var commandUsage = map[string]string{
	"grant": `Usage: leasectl [flags] grant [-lease-ms N] CHUNK SERVER

Asks for a lease of CHUNK for SERVER, N ms long (default: the members' default lease).
A chunk free, expired or already held by SERVER is granted, with a new fencing token:
  granted CHUNK to SERVER token=T expires_in_ms=E     (exit 0)
A chunk held by another server is not; the holder is named:
  held CHUNK by HOLDER token=T expires_in_ms=E        (exit 1)
Exit 3: the outcome is unknown; the grant may have taken effect (check, or renew).
` + flagsNote,
	"renew": `Usage: leasectl [flags] renew [-lease-ms N] CHUNK SERVER

Extends SERVER's lease of CHUNK by a new instance N ms long (default: the members'
default), with a new, larger token; succeeds when the chunk is free or SERVER's:
  renewed CHUNK for SERVER token=T expires_in_ms=E    (exit 0)
Held by another server: exit 1 (409). Exit 3: the renew may have taken effect.
` + flagsNote,
	"check": `Usage: leasectl [flags] check CHUNK

Asks who holds CHUNK, from a majority of the members' acceptors:
  check CHUNK primary=P remaining_ms=R expired=X
primary=none when no lease of CHUNK was ever seen; expired=true when nobody holds it
now (primary then names the last holder).
` + flagsNote,
	"release": `Usage: leasectl [flags] release CHUNK SERVER TOKEN

Gives CHUNK back early: ends every instance of SERVER on CHUNK whose token is <= TOKEN,
so the token of the latest grant or renew ends the lease however often it was renewed.
A newer instance, another server's lease or a lease already ended is left alone.
  released CHUNK for SERVER token=TOKEN               (exit 0)
Exit 3: unknown whether the release took effect (release again, or check).
` + flagsNote,
	"master": `Usage: leasectl [flags] master start|stop|status [-node N]

The master lease of the members themselves: a started node keeps trying to hold one
cluster-wide master lease; a stopped node gives it back. Asked of one node (no failover):
-node is the endpoint's number (1 is the first of -endpoints) or a client URL; without
-node, one endpoint is that node, and status asks every endpoint, a line each:
  master started node=URL
  master stopped node=URL
  master status node=URL is_master=B master=ID remaining_ms=R [token=T]
master=none when the node never learned a master; remaining_ms is 0 when it is not master;
token=T, the master lease's fencing token, only while it is master: a program acting for
the master hands it to the storage it writes (package fence).
` + flagsNote,
	"member": memberUsage + flagsNote,
	"keep": `Usage: leasectl [flags] keep [-lease-ms N] CHUNK SERVER

Takes a lease of CHUNK for SERVER and keeps it alive, renewing at a third of the lease
through any member, until interrupted:
  granted CHUNK to SERVER token=T expires_in_ms=E
  renewed CHUNK for SERVER token=T expires_in_ms=E    (at each renewal)
On SIGINT or SIGTERM it gives the lease back with the latest token and exits 0:
  released CHUNK for SERVER token=T
When the lease is lost (held by another server, or no renewal succeeded before the
believed expiry less a safety margin), it says why on stderr and exits 1, before the
lease can have ended. Sub-second leases work (e.g. -lease-ms 300).
` + flagsNote,
}

const memberUsage = `Usage: leasectl [flags] member list
       leasectl [flags] member add ID [-addr HOST:PORT] [-force] [-wait]
       leasectl [flags] member remove ID [-force] [-wait]

The acceptor set of a cluster started with -membership on: who votes, and changes of it,
one member at a time. A change is agreed by a majority of the current members and
answered once it is in force; the next may start only after every lease the previous
set could have granted has run out (the longest lease: next_change_in_ms).
  member list epoch=E members=A,B,C next_change_in_ms=N
  member added ID epoch=E members=... next_change_in_ms=N
  member removed ID epoch=E members=... next_change_in_ms=N
-addr: the new member's peer address, when the members were not started with ID in
their -cluster list. Refused (exit 1): a change while another waits (it says how long;
-wait waits and asks again, within -timeout), another change won the epoch, or the new
set would not have a majority of members up (-force if you know better).
Replace a dead member n3 by a new node n4 (docs/service.md): remove n3, wait, add n4:
  leasectl member remove n3
  leasectl -timeout 2m member add n4 -addr 127.0.0.1:7104 -wait
`

const flagsNote = `
Flags -endpoints, -token-file, -ca-file and -timeout as in leasectl -h.
Exit status: 0 done, 1 refused, 2 bad usage, 3 unknown outcome.
`
