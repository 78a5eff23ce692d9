package jsonrpc_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// TestListenHandler checks that ListenHandler serves its pattern on an
// http:// listener beside the JSON-RPC path, and nothing else appears.
func TestListenHandler(t *testing.T) {
	noLeaks(t)
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	l, err := srv.Listen("http://127.0.0.1:0/rpc", jsonrpc.ListenHandler("/explorer/", page))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	base := strings.TrimSuffix(l.URL, "/rpc")
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/explorer/app.js"); code != 200 || body != "page /explorer/app.js" {
		t.Errorf("/explorer/app.js: %d %q", code, body)
	}
	if code, _ := get("/other"); code != 404 {
		t.Errorf("/other: %d, want 404", code)
	}
	resp, err := client.Post(l.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"jsonrpc":"2.0","id":1,"result":19}` {
		t.Errorf("JSON-RPC path: %s", b)
	}
}
