package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

var (
	deprecatedSince = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sunset          = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
)

func deprecationServer(logs io.Writer) (*jsonrpc.Server, *jsonrpc.Mux) {
	mux := jsonrpc.NewMux()
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }
	jsonrpc.Register(mux, "add", add)
	jsonrpc.Register(mux, "plus", add, jsonrpc.MethodDoc{Deprecated: true, DeprecatedSince: deprecatedSince, Sunset: sunset, Replacement: "add"})
	return &jsonrpc.Server{Handler: mux, Logger: slog.New(slog.NewTextHandler(logs, nil))}, mux
}

// TestDeprecatedHTTP checks that a deprecated method keeps working over
// HTTP, that its responses carry the Deprecation (RFC 9745) and Sunset (RFC
// 8594) headers and others do not, that each call is counted and that one
// keep-alive connection is logged once.
func TestDeprecatedHTTP(t *testing.T) {
	noLeaks(t)
	var logs lockedBuffer
	srv, mux := deprecationServer(&logs)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	post := func(body string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Post(ts.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for range 3 {
		resp, body := post(`{"jsonrpc":"2.0","id":1,"method":"plus","params":[1,2]}`)
		if body != `{"jsonrpc":"2.0","id":1,"result":3}` {
			t.Fatalf("deprecated call: %s", body)
		}
		if got, want := resp.Header.Get("Deprecation"), "@1780272000"; got != want {
			t.Errorf("Deprecation: %q, want %q", got, want)
		}
		if got, want := resp.Header.Get("Sunset"), "Fri, 01 Jan 2027 00:00:00 GMT"; got != want {
			t.Errorf("Sunset: %q, want %q", got, want)
		}
	}
	resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}`)
	if h := resp.Header.Get("Deprecation"); h != "" {
		t.Errorf("a method that is not deprecated got Deprecation: %q", h)
	}
	// In a batch, the one response carries the header.
	resp, body := post(`[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]},{"jsonrpc":"2.0","id":2,"method":"plus","params":[2,2]}]`)
	if resp.Header.Get("Deprecation") == "" || !strings.Contains(body, `"result":4`) {
		t.Errorf("batch: Deprecation %q, body %s", resp.Header.Get("Deprecation"), body)
	}
	if got := mux.DeprecatedCalls(); len(got) != 1 || got["plus"] != 4 {
		t.Errorf("DeprecatedCalls = %v, want map[plus:4]", got)
	}
	if n := logs.count("deprecated method called"); n != 1 {
		t.Errorf("%d log records for one keep-alive connection, want 1:\n%s", n, logs.b.String())
	}
	if !strings.Contains(logs.b.String(), "replacement=add") || !strings.Contains(logs.b.String(), "sunset=2027-01-01T00:00:00Z") {
		t.Errorf("the log does not name the replacement and sunset:\n%s", logs.b.String())
	}
}

// TestDeprecatedPerConnection checks the log once per stream connection.
func TestDeprecatedPerConnection(t *testing.T) {
	noLeaks(t)
	var logs lockedBuffer
	srv, mux := deprecationServer(&logs)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	defer srv.Shutdown(context.Background())
	ctx := context.Background()
	for conn := range 2 {
		c, err := jsonrpc.Dial(ctx, "tcp://"+ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			var sum int
			if err := c.Call(ctx, "plus", []int{1, 2}, &sum); err != nil || sum != 3 {
				t.Fatalf("call: %v %v", sum, err)
			}
		}
		c.Close()
		if n := logs.count("deprecated method called"); n != conn+1 {
			t.Errorf("after %d connections, %d log records", conn+1, n)
		}
	}
	if got := mux.DeprecatedCalls()["plus"]; got != 6 {
		t.Errorf("DeprecatedCalls: %d, want 6", got)
	}
	// No headers outside HTTP.
	if jsonrpc.SetResponseHeader(ctx, "X", "y") {
		t.Error("SetResponseHeader outside a request reported true")
	}
}

func TestSetResponseHeader(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "h", func(ctx context.Context, _ json.RawMessage) (bool, error) {
		return jsonrpc.SetResponseHeader(ctx, "X-Test", "1"), nil
	})
	ts := httptest.NewServer(&jsonrpc.Server{Handler: mux})
	defer ts.Close()
	resp, err := http.Post(ts.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"h"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("X-Test") != "1" || !strings.Contains(string(b), "true") {
		t.Errorf("header %q, body %s", resp.Header.Get("X-Test"), b)
	}
	// Over a stream, there is nowhere to put it.
	var ok bool
	c := pipe(&jsonrpc.Server{Handler: mux})
	defer c.Close()
	if err := c.Call(context.Background(), "h", nil, &ok); err != nil || ok {
		t.Errorf("over a stream: %v, %v", ok, err)
	}
}
