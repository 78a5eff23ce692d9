package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A response of ours corrupted on its way (one byte replaced, as the chaos
// proxy's corrupt does) no longer parses, but still shows its id: the call
// fails at once with ErrInvalidResponse instead of waiting out its context,
// and the peer still gets its -32700 for the message. A corrupted message
// whose id matches no call, or that is a request, changes nothing: the call
// gets its real answer after them. A corrupted batch reply fails every
// call of its batch.
func TestConnCorruptedResponseFailsItsCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	peerErr := make(chan error, 1)
	go func() { peerErr <- corruptingPeer(l) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.DialConn(ctx, "tcp://"+l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	start := time.Now()
	var got string
	err = c.Call(ctx, "first", nil, &got)
	if !errors.Is(err, jsonrpc.ErrInvalidResponse) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("first call: got %v, want ErrInvalidResponse wrapping the parse error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("first call failed after %v: it waited instead of failing at once", d)
	}
	if err := c.Call(ctx, "second", nil, &got); err != nil || got != "real" {
		t.Fatalf("second call: got %q, %v; want its real answer (the corrupted messages before it are not its)", got, err)
	}
	var b jsonrpc.Batch
	calls := []*jsonrpc.BatchCall{b.Call("third", nil, &got), b.Call("fourth", nil, &got)}
	if err := c.Batch(ctx, &b); err != nil {
		t.Fatalf("Batch: %v", err)
	}
	for _, bc := range calls {
		if !errors.Is(bc.Err, jsonrpc.ErrInvalidResponse) {
			t.Fatalf("batch call %s: got %v, want ErrInvalidResponse (its batch reply was corrupted)", bc.Method, bc.Err)
		}
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the calls took %v: a corrupted response was waited for", d)
	}
	if err := <-peerErr; err != nil {
		t.Fatal(err)
	}
}

// corruptingPeer serves one connection of l: it answers the first request
// with its response corrupted in the result, checks that the client
// answers that with -32700 and id null, then answers the second request
// with a corrupted response to another id, a corrupted request bearing the
// same id, and the real response; and it answers a batch with a
// corrupted reply.
func corruptingPeer(l net.Listener) error {
	nc, err := l.Accept()
	if err != nil {
		return err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	idOf := func(line string) string {
		_, after, _ := strings.Cut(line, `"id":`)
		id, _, _ := strings.Cut(after, "}")
		id, _, _ = strings.Cut(id, ",")
		return id
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.Contains(line, `"method":"first"`) {
		return fmt.Errorf("peer: got %q, want a first request", line)
	}
	id := idOf(line)
	fmt.Fprintf(nc, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"to\xffken\"}\n", id)
	// The client's -32700 (id null) and its second request, in either
	// order: the first call fails at once, before the -32700 is written.
	id = ""
	for parsed := false; !parsed || id == ""; {
		line, err = r.ReadString('\n')
		switch {
		case err != nil:
			return err
		case !parsed && strings.Contains(line, `"id":null`) && strings.Contains(line, `"code":-32700`):
			parsed = true
		case id == "" && strings.Contains(line, `"method":"second"`):
			id = idOf(line)
		default:
			return fmt.Errorf("peer: got %q, want a -32700 error with id null for the corrupted response, and a second request", line)
		}
	}
	fmt.Fprintf(nc, "{\"jsonrpc\":\"2.0\",\"id\":%s0,\"result\":\"to\xffken\"}\n", id)                // no call of the client's
	fmt.Fprintf(nc, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"ask\",\"params\":[\"\xff\"]}\n", id) // a request
	fmt.Fprintf(nc, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"real\"}\n", id)
	// The client's two -32700s and its batch, in either order.
	batch := ""
	for errs := 0; errs < 2 || batch == ""; {
		if line, err = r.ReadString('\n'); err != nil {
			return err
		}
		switch {
		case errs < 2 && strings.Contains(line, `"code":-32700`):
			errs++
		case batch == "" && strings.HasPrefix(line, "["):
			batch = line
		default:
			return fmt.Errorf("peer: got %q, want two -32700 errors and a batch", line)
		}
	}
	var ids []string
	for _, part := range strings.Split(batch, `"id":`)[1:] {
		id, _, _ := strings.Cut(part, "}")
		id, _, _ = strings.Cut(id, ",")
		ids = append(ids, id)
	}
	if len(ids) != 2 {
		return fmt.Errorf("peer: got %q, want a batch of two calls", batch)
	}
	fmt.Fprintf(nc, "[{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"\xff\"},{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"x\"}]\n", ids[0], ids[1])
	_, err = r.ReadString('\n') // the client's -32700
	return err
}
