package jsonrpc_test

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

func get(t *testing.T, url string) (code int, body string, closes bool) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Close
}

func TestHealthAndDraining(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "ping", func(ctx context.Context, p []int) (string, error) { return "pong", nil })
	srv := &jsonrpc.Server{Handler: mux, DrainDelay: 2 * time.Second}
	l, err := srv.Listen("http://127.0.0.1:0/rpc")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(l.URL, "/rpc")
	if code, body, _ := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("serving: %d %q", code, body)
	}
	c := jsonrpc.NewHTTPClient(l.URL)
	defer c.Close()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	deadline := time.Now().Add(time.Second)
	for {
		code, body, closes := get(t, base+"/healthz")
		if code == 503 {
			if body != "draining\n" || !closes {
				t.Fatalf("draining: %q, Connection: close %v", body, closes)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("health never turned 503")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Calls are still served during the delay, each telling the proxy to close.
	req, _ := http.NewRequest("POST", l.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":[]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"pong"`) || !resp.Close {
		t.Fatalf("call while draining: %d %s close=%v", resp.StatusCode, b, resp.Close)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("listener still open after Shutdown")
	}
}

func TestHealthPathOption(t *testing.T) {
	for path, want := range map[string]int{"-": 404, "/live": 200} {
		srv := &jsonrpc.Server{Handler: jsonrpc.NewMux(), HealthPath: path}
		l, err := srv.Listen("ws://127.0.0.1:0/ws")
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(l.URL, "/ws")
		if code, _, _ := get(t, "http"+strings.TrimPrefix(base, "ws")+"/live"); code != want {
			t.Errorf("HealthPath %q: /live answered %d, want %d", path, code, want)
		}
		if code, _, _ := get(t, "http"+strings.TrimPrefix(base, "ws")+"/healthz"); code != 404 {
			t.Errorf("HealthPath %q: /healthz answered %d", path, code)
		}
		srv.Shutdown(context.Background())
	}
}

func TestTrustedProxiesForwardedFor(t *testing.T) {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "whoami", func(ctx context.Context, p []int) (string, error) {
		peer, _ := jsonrpc.PeerFromContext(ctx)
		return peer.RemoteAddr, nil
	})
	for _, tc := range []struct {
		trusted []string
		xff     []string
		want    string // "" : the socket's own address
	}{
		{nil, []string{"203.0.113.9"}, ""},
		{[]string{"127.0.0.1/32"}, nil, ""},
		{[]string{"127.0.0.1/32"}, []string{"203.0.113.9"}, "203.0.113.9"},
		{[]string{"127.0.0.1/32"}, []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},               // the client forged the left entry
		{[]string{"127.0.0.0/8", "10.0.0.0/8"}, []string{"203.0.113.9, 10.1.2.3"}, "203.0.113.9"}, // two proxies
		{[]string{"127.0.0.0/8"}, []string{"203.0.113.9", "10.1.2.3"}, "10.1.2.3"},                // 10.x is not trusted
		{[]string{"127.0.0.0/8"}, []string{"2001:db8::1"}, "2001:db8::1"},
		{[]string{"127.0.0.0/8"}, []string{"junk, 203.0.113.9"}, "203.0.113.9"},
		{[]string{"127.0.0.0/8"}, []string{"junk"}, ""},
		{[]string{"10.0.0.0/8"}, []string{"203.0.113.9"}, ""}, // the socket is not a trusted proxy
	} {
		srv := &jsonrpc.Server{Handler: mux}
		for _, p := range tc.trusted {
			srv.TrustedProxies = append(srv.TrustedProxies, netip.MustParsePrefix(p))
		}
		l, err := srv.Listen("http://127.0.0.1:0/")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", l.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"whoami","params":[]}`))
		req.Header.Set("Content-Type", "application/json")
		for _, v := range tc.xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := string(b)
		if tc.want == "" {
			if !strings.Contains(got, `"result":"127.0.0.1:`) {
				t.Errorf("trusted %v, XFF %q: %s, want the socket address", tc.trusted, tc.xff, got)
			}
		} else if !strings.Contains(got, `"result":"`+tc.want+`"`) {
			t.Errorf("trusted %v, XFF %q: %s, want %s", tc.trusted, tc.xff, got, tc.want)
		}
		srv.Shutdown(context.Background())
	}
}
