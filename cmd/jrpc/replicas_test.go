package main

import (
	"net"
	"strings"
	"testing"
)

// TestServeStateUnreachable: serve --state names a NATS server nobody
// runs: serve does not start, says why and what to do, exit 3.
func TestServeStateUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := run(t, "", "serve", "--state", "nats://"+addr, "--listen", "http://127.0.0.1:0/")
	if r.code != 3 || !strings.Contains(r.stderr, "--state: cannot connect to nats://"+addr) || !strings.Contains(r.stderr, "nats-server -js") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, "", "serve", "--state", "nats://"+addr+"/subject", "--listen", "http://127.0.0.1:0/")
	if r.code != 2 || !strings.Contains(r.stderr, "want nats://HOST:PORT") {
		t.Fatalf("a subject in --state: exit %d\n%s", r.code, r.stderr)
	}
}
