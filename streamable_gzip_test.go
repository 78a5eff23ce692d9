package jsonrpc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// Streamable HTTP's JSON answers are gzipped like plain HTTP replies (a
// client that accepts gzip, a reply of HTTPCompressMinSize or more), on
// both paths that answer JSON (a client that takes event streams, one that
// takes JSON only) and with sessions; an event stream is never gzipped; a
// client that does not accept gzip gets the reply plain; our Streamable
// client reads the gzipped answer.
func TestStreamableHTTPJSONGzip(t *testing.T) {
	big := strings.Repeat("abcdefgh", 1<<10)
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (string, error) { return "ready", nil })
	jsonrpc.Register(mux, "big", func(context.Context, struct{}) (string, error) { return big, nil })
	jsonrpc.Register(mux, "bigWithProgress", func(ctx context.Context, _ struct{}) (string, error) {
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "notifications/progress", map[string]int{"progress": 1}); err != nil {
			return "", err
		}
		return big, nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	want := `{"jsonrpc":"2.0","id":1,"result":"` + big + `"}`
	post := func(t *testing.T, url, body, accept, coding, session string) (*http.Response, string) {
		t.Helper()
		h := http.Header{"Accept": {accept}, "Accept-Encoding": {coding}} // set: the transport does not decompress
		if session != "" {
			h.Set("Mcp-Session-Id", session)
		}
		resp, b := postEncoded(t, url, body, h)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			b = gunzipped(t, b)
		}
		return resp, string(b)
	}
	for _, sessions := range []bool{false, true} {
		hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{Sessions: sessions}))
		defer hs.Close()
		for _, tc := range []struct {
			method, accept, acceptEncoding, contentType, encoding string
		}{
			{"big", bothAccept, "gzip", "application/json", "gzip"},
			{"big", "application/json", "gzip", "application/json", "gzip"},
			{"big", bothAccept, "identity", "application/json", ""},
			{"bigWithProgress", bothAccept, "gzip", "text/event-stream", ""},
		} {
			var session string
			if sessions {
				resp, _ := post(t, hs.URL, `{"jsonrpc":"2.0","id":0,"method":"initialize"}`, bothAccept, "gzip", "")
				if session = resp.Header.Get("Mcp-Session-Id"); session == "" {
					t.Fatal("no session")
				}
			}
			resp, body := post(t, hs.URL, `{"jsonrpc":"2.0","id":1,"method":"`+tc.method+`"}`, tc.accept, tc.acceptEncoding, session)
			name := tc.method + " accept " + tc.accept + " encoding " + tc.acceptEncoding
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) || resp.Header.Get("Content-Encoding") != tc.encoding {
				t.Fatalf("sessions %v, %s: %d, Content-Type %q, Content-Encoding %q", sessions, name, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
			}
			if tc.contentType == "application/json" && body != want || tc.contentType != "application/json" && !strings.Contains(body, want) {
				t.Fatalf("sessions %v, %s: body of %d bytes, not the reply", sessions, name, len(body))
			}
		}
	}

	// Our Streamable client reads a gzipped answer.
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := jsonrpc.DialStreamableHTTP(ctx, hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	if err := c.Call(ctx, "big", nil, &got); err != nil || got != big {
		t.Fatalf("Streamable client: %d bytes, %v", len(got), err)
	}
}
