package jsonrpc

import (
	"bytes"
	"context"
	"testing"
)

// dispatch serves a message already scanned from its scan, without
// scanning it again (here its first byte is broken: a scan would answer
// -32700), and scans the next one.
func TestDispatchTakesAScan(t *testing.T) {
	mux := NewMux()
	mux.HandleFunc("echo", func(_ context.Context, req *Request) (any, error) { return "scanned once", nil })
	srv := &Server{Handler: mux}
	x := &exchange{srv: srv}
	msg := []byte(`{"jsonrpc":"2.0","method":"echo","id":7}`)
	x.data = msg
	if e := srv.scan(&x.inbound); e != nil {
		t.Fatal(e)
	}
	garbage := bytes.Clone(msg) // the envelope's offsets still point at the method and id
	garbage[0] = '#'
	x.data, x.scanned = garbage, true
	srv.dispatch(context.Background(), &x.inbound, x)
	if got := string(x.reply); got != `{"jsonrpc":"2.0","id":7,"result":"scanned once"}` {
		t.Fatalf("reply %s", got)
	}
	if x.scanned {
		t.Fatal("the scan was not marked taken")
	}
	x.reply = nil
	srv.dispatch(context.Background(), &x.inbound, x)
	if !bytes.Contains(x.reply, []byte(`-32700`)) {
		t.Fatalf("the next message was not scanned: %s", x.reply)
	}
}
