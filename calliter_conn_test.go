package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
)

// rawLineServer accepts one connection on l and answers each request line
// with what reply returns for it (see rawServer).
func rawLineServer(t *testing.T, l net.Listener, gate <-chan struct{}, reply func(id json.RawMessage, method string) []string) {
	t.Helper()
	rawServer(l, gate, func(br *bufio.Reader) ([]byte, error) { return br.ReadBytes('\n') }, reply)
}

// rawServer accepts one connection on l, reads each request with read
// and answers it with the pieces reply returns, written in turn with a
// wait on the gate between the first and the rest when gate is not nil;
// a reply of no pieces, or a piece "<close>", closes the connection.
func rawServer(l net.Listener, gate <-chan struct{}, read func(*bufio.Reader) ([]byte, error), reply func(id json.RawMessage, method string) []string) {
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		br := bufio.NewReader(nc)
		for {
			msg, err := read(br)
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(msg, &req) != nil {
				return
			}
			pieces := reply(req.ID, req.Method)
			if len(pieces) == 0 {
				return
			}
			for i, piece := range pieces {
				if i == 1 && !gateOpens(gate) || piece == "<close>" {
					return
				}
				if _, err := io.WriteString(nc, piece); err != nil {
					return
				}
			}
		}
	}()
}

// gateOpens waits for gate to close (nil: open) and reports whether it
// did within 60 s.
func gateOpens(gate <-chan struct{}) bool {
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-time.After(60 * time.Second):
		return false
	}
}

// checkIncremental ranges CallIter over "items", whose server sends
// [1,2,3] past its first element only once the gate is closed, which the
// loop does on that element (a client that read the response whole would
// wait forever); then the client's call of "next" gets "after".
func checkIncremental(t *testing.T, ctx context.Context, c jsonrpc.Client, gate chan struct{}) {
	t.Helper()
	var got []int
	for v, err := range jsonrpc.CallIter[int](ctx, c, "items", nil) {
		if err != nil {
			t.Fatal(err)
		}
		if got = append(got, v); len(got) == 1 {
			close(gate)
		}
	}
	if len(got) != 3 || got[2] != 3 {
		t.Fatalf("got %v", got)
	}
	var s string
	if err := c.Call(ctx, "next", nil, &s); err != nil || s != "after" {
		t.Fatalf("the call after: %q %v", s, err)
	}
}

// listenLoopback listens on tcp or on a unix socket in a temporary folder.
func listenLoopback(t *testing.T, network string) (net.Listener, string) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(t.TempDir(), "s.sock")
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, network + "://" + l.Addr().String()
}

// On a connection (newline framing), CallIter reads the response as it
// arrives: the server sends the rest of the array only once the loop has
// had the first element (a client that read the line whole would wait
// forever), and the connection serves the next call after it.
func TestCallIterConnIncremental(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			l, url := listenLoopback(t, network)
			gate := make(chan struct{})
			rawLineServer(t, l, gate, func(id json.RawMessage, method string) []string {
				if method == "items" {
					return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":[1,`, "2,3]}\n"}
				}
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":"after"}` + "\n", ""}
			})
			c, err := jsonrpc.Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkIncremental(t, ctx, c, gate)
		})
	}
}

// On a connection, a CallIter response whose element is over the size
// limit fails with ErrMessageTooLarge after the elements before it; one
// whose result comes before its id is read whole (not lent) and reads the
// same; one broken off early is discarded to its end. The connection
// serves the next call after each.
func TestCallIterConnHostile(t *testing.T) {
	const limit = 64 << 10
	bodies := hostileBodies(limit)
	reply := func(id json.RawMessage, method string) []string {
		b := strings.Replace(bodies[method], "ID", string(id), 1)
		return []string{b[:len(b)/2], b[len(b)/2:] + "\n"} // cut: the head arrives before the rest
	}
	for _, network := range []string{"tcp", "ws"} {
		t.Run(network, func(t *testing.T) {
			var url string
			if network == "ws" {
				url = rawWSServer(t, reply)
			} else {
				var l net.Listener
				l, url = listenLoopback(t, "tcp")
				rawLineServer(t, l, nil, reply)
			}
			checkCallIterHostile(t, url, limit)
		})
	}
}

// hostileBodies are the responses checkCallIterHostile calls for (ID
// stands for the request's id), for a client whose limit is limit.
func hostileBodies(limit int) map[string]string {
	huge := strings.Repeat("x", 4*limit)
	return map[string]string{
		"tooLarge":    `{"jsonrpc":"2.0","id":ID,"result":[1,"` + huge + `",3]}`,
		"resultFirst": `{"result":[1,2,3],"jsonrpc":"2.0","id":ID}`,
		"long":        `{"jsonrpc":"2.0","id":ID,"result":[1` + strings.Repeat(",2", 100000) + `]}`,
		"error":       `{"jsonrpc":"2.0","id":ID,"error":{"code":-32001,"message":"no ` + strings.Repeat("x", 1000) + `"}}`,
		"next":        `{"jsonrpc":"2.0","id":ID,"result":[7]}`,
	}
}

func checkCallIterHostile(t *testing.T, url string, limit int64, opts ...jsonrpc.DialOption) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, url, append(opts, jsonrpc.WithMaxMessageSize(limit))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	collect := func(method string, stopAfter int) ([]any, error) {
		var got []any
		for v, err := range jsonrpc.CallIter[any](ctx, c, method, nil) {
			if err != nil {
				return got, err
			}
			if got = append(got, v); len(got) == stopAfter {
				break
			}
		}
		return got, nil
	}
	next := func(after string) {
		t.Helper()
		if got, err := collect("next", 0); err != nil || len(got) != 1 || got[0] != 7.0 {
			t.Fatalf("the call after %s: %v %v", after, got, err)
		}
	}
	got, err := collect("tooLarge", 0)
	if len(got) != 1 || !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("an element over the limit: %v then %v", got, err)
	}
	next("an element over the limit")
	if got, err = collect("resultFirst", 0); err != nil || len(got) != 3 {
		t.Fatalf("result before id: %v %v", got, err)
	}
	next("a result before its id")
	if got, err = collect("long", 2); err != nil || len(got) != 2 {
		t.Fatalf("broken off: %v %v", got, err)
	}
	next("a loop broken off")
	var rpcErr *jsonrpc.Error
	if _, err = collect("error", 0); !errors.As(err, &rpcErr) || rpcErr.Code != -32001 {
		t.Fatalf("an error response: %v", err)
	}
	next("an error response")
	// A response read whole (Call) over the limit is refused as before.
	var whole []any
	if err := c.Call(ctx, "tooLarge", nil, &whole); !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("Call of a result over the limit: %v", err)
	}
}

// rawWSServer serves one WebSocket client: each text message is a request,
// answered with the pieces reply returns as the frames of one message.
func rawWSServer(t *testing.T, reply func(id json.RawMessage, method string) []string) string {
	t.Helper()
	return rawWSServerGated(t, nil, reply)
}

// rawWSServerGated is rawWSServer with a wait on the gate between the
// first piece and the rest when gate is not nil.
func rawWSServerGated(t *testing.T, gate <-chan struct{}, reply func(id json.RawMessage, method string) []string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wc, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer wc.CloseNow()
		wc.SetReadLimit(1 << 20)
		ctx := r.Context()
		for {
			_, msg, err := wc.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(msg, &req) != nil {
				return
			}
			mw, err := wc.Writer(ctx, websocket.MessageText)
			if err != nil {
				return
			}
			for i, piece := range reply(req.ID, req.Method) {
				if i == 1 && !gateOpens(gate) {
					return
				}
				if _, err := io.WriteString(mw, strings.TrimSuffix(piece, "\n")); err != nil {
					return
				}
			}
			if mw.Close() != nil {
				return
			}
		}
	}))
	t.Cleanup(hs.Close)
	return "ws" + strings.TrimPrefix(hs.URL, "http")
}

// CallIter reads a streamed result as it arrives over HTTP, WebSocket and
// on every connection with newline framing (tcp, unix, stdio): the server writes
// its last element only once the client, having had the first, sends it a
// notification (sending works while the connection's reader is lent). A
// client that read the response whole would wait forever.
func TestCallIterIncrementalEveryTransport(t *testing.T) {
	p := streamParams{N: 400, Size: 100} // past StreamChunk: the first chunk is written at once
	for name, dial := range streamDialers(t) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c := dial()
			n := 0
			for v, err := range jsonrpc.CallIter[streamItem](ctx, c, "gated", p) {
				if err != nil {
					t.Fatalf("element %d: %v", n, err)
				}
				if v != p.item(n) {
					t.Fatalf("element %d is %+v", n, v)
				}
				if n++; n == 1 {
					if err := c.Notify(ctx, "release", nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n != p.N+1 {
				t.Fatalf("%d elements, want %d", n, p.N+1)
			}
			var all []streamItem
			if err := c.Call(ctx, "items", streamParams{N: 3}, &all); err != nil || len(all) != 3 {
				t.Fatalf("the call after: %v %v", all, err)
			}
		})
	}
}
