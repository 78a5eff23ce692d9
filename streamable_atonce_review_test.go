package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// atOnceClient bounds every exchange of these tests.
var atOnceClient = &http.Client{Timeout: 10 * time.Second}

// atOncePOST POSTs body as an MCP client does (JSON and event streams)
// with the headers given, and returns the answer's status, Content-Type
// and body.
func atOncePOST(t *testing.T, url, body string, header map[string]string) (status int, contentType, answer string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := atOnceClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// atOnceSession initializes a session and returns its id.
func atOnceSession(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := atOnceClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatalf("no session: %d", resp.StatusCode)
	}
	return id
}

// waitCause waits up to 5 s for ctx to end and returns its cause.
func waitCause(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(5 * time.Second):
		return errors.New("not cancelled within 5 s")
	}
}

// A session that ends cancels its requests served at once under every
// convention, none too (only those under a Convention were cancelled:
// the POST was routed, and kept its requests, for cancels alone), whether
// the handler opened its event stream or not.
func TestStreamableAtOnceSessionEndAnyConvention(t *testing.T) {
	for _, cv := range []Convention{ConventionNone, ConventionLSP, ConventionMCP} {
		for _, open := range []bool{false, true} {
			t.Run(fmt.Sprint(cv)+map[bool]string{false: "/json", true: "/opened"}[open], func(t *testing.T) {
				started, cancelled := make(chan struct{}), make(chan error, 1)
				mux := NewMux()
				mux.HandleFunc("initialize", func(context.Context, *Request) (any, error) { return "ready", nil })
				mux.HandleFunc("wait", func(ctx context.Context, _ *Request) (any, error) {
					if open {
						ConnFromContext(ctx).Notify(ctx, "n", nil)
					}
					close(started)
					cancelled <- waitCause(ctx)
					return nil, ctx.Err()
				})
				srv := &Server{Handler: mux, Convention: cv}
				hs := httptest.NewServer(srv.StreamableHTTPHandler(StreamableHTTPOptions{Sessions: true, EventStoreSize: -1, KeepAlive: -1}))
				t.Cleanup(hs.Close)
				session := atOnceSession(t, hs.URL)
				done := make(chan struct{})
				go func() {
					defer close(done)
					atOncePOST(t, hs.URL, `{"jsonrpc":"2.0","id":"w","method":"wait"}`, map[string]string{"Mcp-Session-Id": session})
				}()
				<-started
				del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				del.Header.Set("Mcp-Session-Id", session)
				resp, err := atOnceClient.Do(del)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if err := <-cancelled; err != ErrClosed {
					t.Errorf("the handler's context ended with %v", err)
				}
				<-done
			})
		}
	}
}
