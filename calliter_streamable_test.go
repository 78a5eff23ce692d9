package jsonrpc_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// rawStreamableServer answers each POST with application/json, the pieces
// reply returns for its one request, flushed one by one (gzipped when
// gz), with a wait on the gate between the first and the rest when gate
// is not nil; a piece "<length+N>" declares a Content-Length N bytes
// longer than the pieces after it (net/http then cuts the connection).
// GET is declined (405).
func rawStreamableServer(t *testing.T, gz bool, gate <-chan struct{}, reply func(id json.RawMessage, method string) []string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		pieces := reply(req.ID, req.Method)
		w.Header().Set("Content-Type", "application/json")
		if n, ok := strings.CutPrefix(pieces[0], "<length+"); ok {
			extra, _ := strconv.Atoi(strings.TrimSuffix(n, ">"))
			pieces = pieces[1:]
			w.Header().Set("Content-Length", strconv.Itoa(len(strings.Join(pieces, ""))+extra))
		}
		out := io.Writer(w)
		flush := w.(http.Flusher).Flush
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			defer zw.Close()
			out = zw
			flush = func() { zw.Flush(); w.(http.Flusher).Flush() }
		}
		for i, piece := range pieces {
			if i == 1 && !gateOpens(gate) {
				return
			}
			io.WriteString(out, strings.TrimSuffix(piece, "\n"))
			flush()
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A Streamable HTTP client's CallIter reads a JSON answer as it arrives,
// plain or gzipped: the server sends the rest of the array only once the
// loop has had the first element (a client that read the answer whole
// would wait forever); the next call goes on.
func TestCallIterStreamableIncremental(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run("gzip="+strconv.FormatBool(gz), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			gate := make(chan struct{})
			url := rawStreamableServer(t, gz, gate, func(id json.RawMessage, method string) []string {
				if method == "items" {
					return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":[1,`, "2,3]}"}
				}
				return []string{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":"after"}`}
			})
			c, err := jsonrpc.DialStreamableHTTP(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			checkIncremental(t, ctx, c, gate)
		})
	}
}

// A Streamable HTTP client's CallIter meets the hostile answers of
// TestCallIterConnHostile as the other clients do (an element over the
// limit, the result before the id, a loop broken off, an error response;
// a Call whose answer is over the limit fails it), and an answer cut
// short (a Content-Length longer than the body) fails with
// ErrInvalidResponse after the elements before the cut; the next call
// works after each.
func TestCallIterStreamableHostile(t *testing.T) {
	const limit = 64 << 10
	bodies := hostileBodies(limit)
	bodies["cut"] = `{"jsonrpc":"2.0","id":ID,"result":[1,2,"abc`
	url := rawStreamableServer(t, false, nil, func(id json.RawMessage, method string) []string {
		b := strings.Replace(bodies[method], "ID", string(id), 1)
		if method == "cut" {
			return []string{"<length+100>", b}
		}
		return []string{b[:len(b)/2], b[len(b)/2:]}
	})
	checkCallIterHostile(t, url, limit, jsonrpc.WithStreamableHTTP())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := jsonrpc.DialStreamableHTTP(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []int
	var last error
	for v, err := range jsonrpc.CallIter[int](ctx, c, "cut", nil) {
		if err != nil {
			last = err
			break
		}
		got = append(got, v)
	}
	if !errors.Is(last, jsonrpc.ErrInvalidResponse) || len(got) != 2 {
		t.Fatalf("an answer cut short: %v, then %v", got, last)
	}
	var after []int
	if err := c.Call(ctx, "next", nil, &after); err != nil || len(after) != 1 {
		t.Fatalf("the call after an answer cut short: %v %v", after, err)
	}
}

// Against our own Streamable HTTP server (which writes a Stream whole into
// its JSON answer: a peer that does not stream), CallIter reads a result
// 30 times the client's WithMaxMessageSize, element by element, where Call
// refuses it.
func TestCallIterStreamableOverLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := newStreamServer()
	defer srv.Shutdown(context.Background())
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL, jsonrpc.WithMaxMessageSize(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := streamParams{N: 2000, Size: 1000}
	n := 0
	for v, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
		if err != nil {
			t.Fatalf("element %d: %v", n, err)
		}
		if v != p.item(n) {
			t.Fatalf("element %d is %+v", n, v)
		}
		n++
	}
	if n != p.N {
		t.Fatalf("%d elements, want %d", n, p.N)
	}
	var whole []streamItem
	if err := c.Call(ctx, "items", p, &whole); !errors.Is(err, jsonrpc.ErrMessageTooLarge) {
		t.Fatalf("Call of the same result: %v, want ErrMessageTooLarge", err)
	}
}
