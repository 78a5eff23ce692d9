package jsonrpc

import (
	"bytes"
	"context"
	"testing"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// A Streamable HTTP POST's message is scanned once: its connection takes
// the POST's scan for that message (the same bytes), once, and scans any
// other message itself.
func TestPostStreamScanTakenOnce(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","method":"echo","id":1}`)
	in := inbound{data: data}
	if e := (&Server{}).scan(&in); e != nil {
		t.Fatal(e)
	}
	ps := &postStream{scanned: &in.m, scannedData: data}
	var m wire.Message
	if ps.takeScan(bytes.Clone(data), &m) {
		t.Fatal("the scan was taken for another message with the same text")
	}
	if !ps.takeScan(data, &m) || len(m.Elems) != 1 || m.Elems[0].Kind != wire.KindRequest {
		t.Fatalf("the POST's scan was not taken: %+v", m)
	}
	if ps.takeScan(data, &m) {
		t.Fatal("the scan was taken twice")
	}
}

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
