package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// waitReleaseMux serves "wait", which returns once "release" has run (or
// fails after 10 s), and "release".
func waitReleaseMux() *Mux {
	mux := NewMux()
	released := make(chan struct{})
	mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
		select {
		case <-released:
			return "released", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("never released")
		}
	})
	mux.HandleFunc("release", func(context.Context, *Request) (any, error) {
		close(released)
		return "done", nil
	})
	return mux
}

// A batch is served in turn while its elements are quick; an element that
// waits for a later one of the same batch does not hold it up: once it has
// run a while, the rest are served beside it. On a message transport
// (Process) and on a connection.
func TestBatchElementWaitingForALaterOne(t *testing.T) {
	const msg = `[{"jsonrpc":"2.0","method":"wait","id":1},{"jsonrpc":"2.0","method":"release","id":2}]`
	const want = `[{"jsonrpc":"2.0","id":1,"result":"released"},{"jsonrpc":"2.0","id":2,"result":"done"}]`
	if got := (&Server{Handler: waitReleaseMux()}).Process(context.Background(), []byte(msg)); string(got) != want {
		t.Fatalf("Process: %s\nwant %s", got, want)
	}
	a, b := net.Pipe()
	conn := NewConn(NewStream(a, StreamOptions{}), &Server{Handler: waitReleaseMux()})
	defer conn.Close()
	defer b.Close()
	b.SetDeadline(time.Now().Add(30 * time.Second))
	go b.Write([]byte(msg + "\n"))
	line, err := bufio.NewReader(b).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.TrimSpace(line); string(got) != want {
		t.Fatalf("Conn: %s\nwant %s", got, want)
	}
}
