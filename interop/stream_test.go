package interop

import (
	"context"
	"strings"
	"testing"

	"github.com/creachadair/jrpc2/channel"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/seedhq/jsonrpc"
)

type streamElem struct {
	I int    `json:"i"`
	S string `json:"s"`
}

// streamService serves "items": a jsonrpc.Stream of n elements of about
// 200 bytes, well past one StreamChunk for n in the thousands.
func streamService(t *testing.T, url string) *jsonrpc.Listener {
	t.Helper()
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "items", func(ctx context.Context, n int) (jsonrpc.Stream[streamElem], error) {
		return func(yield func(streamElem, error) bool) {
			for i := range n {
				if !yield(streamElem{I: i, S: strings.Repeat("x", 200)}, nil) {
					return
				}
			}
		}, nil
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: testLogger(t)}
	l, err := srv.Listen(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return l
}

func checkStreamElems(t *testing.T, got []streamElem, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%d elements, want %d", len(got), n)
	}
	for i, e := range got {
		if e.I != i || len(e.S) != 200 {
			t.Fatalf("element %d: %+v", i, e)
		}
	}
}

// Peers that know nothing of streaming read a streamed result as any
// array: jrpc2 over TCP (line framing: one message written in pieces;
// LSP framing: encoded whole, its length first) and go-ethereum's client
// over HTTP (a chunked body).
func TestPeersReadStreamedResult(t *testing.T) {
	const n = 5000 // about 1 MiB
	ctx := testContext(t)
	l := streamService(t, "tcp://127.0.0.1:0")
	for _, fr := range []struct {
		name    string
		framing channel.Framing
	}{{"line", channel.Line}, {"lsp", channel.LSP}} {
		t.Run("jrpc2-"+fr.name, func(t *testing.T) {
			cli := dialJrpc2(t, hostPort(l.URL), fr.framing, nil)
			var got []streamElem
			if err := cli.CallResult(ctx, "items", []int{n}, &got); err != nil {
				t.Fatal(err)
			}
			checkStreamElems(t, got, n)
		})
	}
	t.Run("geth-http", func(t *testing.T) {
		hl := streamService(t, "http://127.0.0.1:0")
		c, err := rpc.DialContext(ctx, hl.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var got []streamElem
		if err := c.CallContext(ctx, &got, "items", n); err != nil {
			t.Fatal(err)
		}
		checkStreamElems(t, got, n)
	})
}
