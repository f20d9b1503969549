// Package certs makes the certificates a lease-node cluster runs on, with
// Go's crypto and nothing from the network: a cluster CA, one certificate
// per member (its id as the only DNS name, for both TLS uses, so members
// authenticate each other whatever their addresses) and, for client TLS,
// one HTTP server certificate for the client endpoints (the host names
// and IP addresses clients connect to). Keys are ECDSA P-256.
//
// It is for test clusters and for operators who have no CA of their own
// (lease-node certs; scripts/cluster.sh). It is not a CA service: no
// revocation, no renewal; a certificate is valid for the days asked for
// (default 30), from an hour before it was made (clock differences).
//
// Tests: certs_test.go (the files parse, chain to the CA, name what they
// should, keys are private to the owner; an existing CA is reused).
package certs
