package chaos_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// tlsPair returns a server certificate for 127.0.0.1 and a client
// configuration that trusts it (httptest's).
func tlsPair(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	roots := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return &tls.Config{Certificates: ts.TLS.Certificates}, &tls.Config{RootCAs: roots}
}

// A proxy in front of a TLS target (tls://, https://, wss://) dials it
// with Options.TargetTLS and listens in the clear: calls pass, faults act.
// Without the target's roots the handshake fails and no call goes through.
func TestProxyTLSTargets(t *testing.T) {
	serverTLS, clientTLS := tlsPair(t)
	for _, scheme := range []string{"tls", "https", "wss"} {
		t.Run(scheme, func(t *testing.T) {
			srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
			l, err := srv.Listen(scheme+"://127.0.0.1:0/", jsonrpc.ListenTLS(serverTLS))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				srv.Shutdown(ctx)
				l.Err()
			})
			p, err := chaos.Start("", l.URL, chaos.Options{TargetTLS: clientTLS, Faults: []*chaos.Fault{chaos.MustParse("method=subtract,dir=out,nth=2,error=-32042")}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			want := map[string]string{"tls": "tcp", "https": "http", "wss": "ws"}[scheme]
			if got := p.URL[:len(want)]; got != want {
				t.Fatalf("proxy URL %s, want scheme %s", p.URL, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := jsonrpc.Dial(ctx, p.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if r, err := call(c, 5*time.Second); err != nil || r != 19 {
				t.Fatalf("first call: %v, %v", r, err)
			}
			var e *jsonrpc.Error
			if _, err := call(c, 5*time.Second); !errors.As(err, &e) || e.Code != -32042 {
				t.Fatalf("second call: %v, want the injected -32042", err)
			}

			// The same target, its roots unknown: nothing gets through.
			q, err := chaos.Start("", l.URL, chaos.Options{TargetTLS: &tls.Config{}})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			c2, err := jsonrpc.Dial(ctx, q.URL)
			if err == nil {
				defer c2.Close()
				_, err = call(c2, time.Second)
			}
			if err == nil {
				t.Fatal("a call through a proxy that cannot verify the target succeeded")
			}
		})
	}
}

// A binary WebSocket frame goes on as binary, a text frame as text, in
// both directions (the echo answers in the type it was sent).
func TestProxyWebSocketFrameTypes(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, b); err != nil {
				return
			}
		}
	}))
	defer echo.Close()
	p := chaos.New("ws" + echo.URL[len("http"):])
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, p.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	msg := []byte(`{"jsonrpc":"2.0","method":"m","id":1}`)
	for _, typ := range []websocket.MessageType{websocket.MessageBinary, websocket.MessageText, websocket.MessageBinary} {
		if err := c.Write(ctx, typ, msg); err != nil {
			t.Fatal(err)
		}
		got, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != typ || string(b) != string(msg) {
			t.Fatalf("sent %v, got back %v %q", typ, got, b)
		}
	}
}
