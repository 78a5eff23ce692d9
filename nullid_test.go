package jsonrpc_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A peer that rejects a whole message answers with id null; when only that
// message is waiting, its calls fail with the error instead of hanging.
func TestConnNullIDErrorFailsTheOnlyWaitingMessage(t *testing.T) {
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux(), MaxBatchLen: 2}
	a, b := net.Pipe()
	jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	var batch jsonrpc.Batch
	calls := []*jsonrpc.BatchCall{batch.Call("x", nil, nil), batch.Call("y", nil, nil), batch.Call("z", nil, nil)}
	if err := c.Batch(ctx, &batch); err != nil {
		t.Fatalf("Batch: %v (want the per-call errors, not a hang)", err)
	}
	for _, bc := range calls {
		var e *jsonrpc.Error
		if !errors.As(bc.Err, &e) || e.Code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("call %s: got %v, want the -32600 batch-too-long error", bc.Method, bc.Err)
		}
	}
	// The connection still works.
	err := c.Call(ctx, "nope", nil, nil)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("got %v, want -32601", err)
	}
}

// A transport that breaks (not a clean end of input) cancels running handlers at once.
func TestConnBrokenTransportCancelsHandlers(t *testing.T) {
	started := make(chan struct{})
	canceled := make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "block", func(ctx context.Context, _ []any) (any, error) {
		close(started)
		<-ctx.Done()
		close(canceled)
		return nil, ctx.Err()
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &jsonrpc.Server{Handler: mux}
	go srv.Serve(l, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	defer srv.Shutdown(context.Background())
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc.Write([]byte(`{"jsonrpc":"2.0","method":"block","id":1}` + "\n"))
	<-started
	nc.(*net.TCPConn).SetLinger(0) // close with a reset: the peer is gone, not done
	nc.Close()
	select {
	case <-canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled after the connection was reset")
	}
}

// A peer that answers a batch of ours only in part: the calls it left out
// fail with an error instead of waiting forever.
func TestConnBatchAnsweredInPart(t *testing.T) {
	a, b := net.Pipe()
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	defer c.Close()
	defer a.Close()
	go func() {
		// A hand-written peer: read the batch, answer its first call only.
		buf := make([]byte, 4096)
		n, err := a.Read(buf)
		if err != nil || n == 0 {
			return
		}
		a.Write([]byte(`[{"jsonrpc":"2.0","id":1,"result":"one"}]` + "\n"))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var batch jsonrpc.Batch
	var one string
	first := batch.Call("a", nil, &one)
	second := batch.Call("b", nil, nil)
	if err := c.Batch(ctx, &batch); err != nil {
		t.Fatalf("Batch: %v", err)
	}
	if first.Err != nil || one != "one" {
		t.Fatalf("first call: %q %v", one, first.Err)
	}
	if second.Err == nil {
		t.Fatal("the call the peer left out did not fail")
	}
}
