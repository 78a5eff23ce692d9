package chaos_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// target serves the demo service on a loopback URL of scheme; for
// streamable, Streamable HTTP on http.
func target(t testing.TB, scheme string) string {
	t.Helper()
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	var opts []jsonrpc.ListenOption
	url := scheme + "://127.0.0.1:0/"
	switch scheme {
	case "unix":
		url = "unix://" + t.TempDir() + "/t.sock"
	case "streamable":
		url = "http://127.0.0.1:0/mcp"
		opts = append(opts, jsonrpc.ListenStreamableHTTP(jsonrpc.StreamableHTTPOptions{}))
	}
	l, err := srv.Listen(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		l.Err()
	})
	return l.URL
}

func dialOpts(kind string) []jsonrpc.DialOption {
	switch kind {
	case "header":
		return []jsonrpc.DialOption{jsonrpc.WithFraming(jsonrpc.FramingHeader)}
	case "streamable":
		return []jsonrpc.DialOption{jsonrpc.WithStreamableHTTP()}
	}
	return nil
}

// kinds are the transports (and framings) the proxy is tried on.
var kinds = []struct{ name, scheme string }{
	{"tcp", "tcp"}, {"header", "tcp"}, {"unix", "unix"}, {"ws", "ws"}, {"http", "http"}, {"streamable", "streamable"},
}

func proxied(t *testing.T, kind, scheme string, faults ...string) (*chaos.Proxy, jsonrpc.Client) {
	t.Helper()
	var fs []*chaos.Fault
	for _, s := range faults {
		fs = append(fs, chaos.MustParse(s))
	}
	p := chaos.New(target(t, scheme), fs...)
	t.Cleanup(func() { p.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, p.URL, dialOpts(kind)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return p, c
}

func call(c jsonrpc.Client, d time.Duration) (float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var r float64
	err := c.Call(ctx, "subtract", []int{42, 23}, &r)
	return r, err
}

// Every transport: messages no fault matches pass; the second subtract
// gets the injected error with its id; the third is dropped (its call ends
// at its context); each fault is reported.
func TestProxyFaultsEachTransport(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p, c := proxied(t, k.name, k.scheme, "method=subtract,dir=in,nth=2,error=-32042", "method=subtract,dir=in,nth=3,drop")
			if r, err := call(c, 5*time.Second); err != nil || r != 19 {
				t.Fatalf("first call: %v, %v", r, err)
			}
			_, err := call(c, 5*time.Second)
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != -32042 {
				t.Fatalf("second call: %v, want the injected -32042", err)
			}
			if _, err := call(c, 300*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("third call: %v, want its deadline", err)
			}
			if r, err := call(c, 5*time.Second); err != nil || r != 19 {
				t.Fatalf("fourth call: %v, %v", r, err)
			}
			ev := p.Events()
			if len(ev) != 2 || ev[0].Action != chaos.Error || ev[0].Method != "subtract" || ev[1].Action != chaos.Drop || ev[1].Dir != "in" {
				t.Fatalf("events %v", ev)
			}
			if k.name != "http" && k.name != "streamable" && (ev[0].Msg != 2 || ev[1].Msg != 3) {
				t.Errorf("message numbers %d, %d, want 2, 3", ev[0].Msg, ev[1].Msg)
			}
			if !strings.Contains(ev[0].String(), "chaos: error dir=in method=subtract") {
				t.Errorf("report line %q", ev[0])
			}
		})
	}
}

// An answer the proxy makes up to a client's first request, before the
// target has said anything, goes in the client's framing (Content-Length).
func TestProxyErrorFirstInClientFraming(t *testing.T) {
	_, c := proxied(t, "header", "tcp", "method=subtract,dir=in,nth=1,error=-32042")
	_, err := call(c, 5*time.Second)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != -32042 {
		t.Fatalf("first call: %v, want the injected -32042", err)
	}
	if r, err := call(c, 5*time.Second); err != nil || r != 19 {
		t.Fatalf("second call: %v, %v", r, err)
	}
}
