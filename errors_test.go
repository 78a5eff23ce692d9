package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc"
)

// Errors keep their causes: each family below is matched with errors.Is or
// errors.As, never by its text.

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestErrorDialRefusedIsNetOpError(t *testing.T) {
	addr := closedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, u := range []string{"tcp://" + addr, "ws://" + addr + "/"} {
		_, err := jsonrpc.Dial(ctx, u)
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" {
			t.Errorf("Dial(%s) = %v (%T), want a *net.OpError from dial", u, err, err)
		}
	}
	// HTTP dials on the first call.
	c, err := jsonrpc.Dial(ctx, "http://"+addr+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Call(ctx, "x", nil, nil)
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("HTTP Call = %v (%T), want a *net.OpError", err, err)
	}
}

func TestErrorInvalidURLIsURLError(t *testing.T) {
	_, err := jsonrpc.Dial(context.Background(), "tcp://[::1")
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Errorf("Dial = %v (%T), want a *url.Error", err, err)
	}
	_, err = (&jsonrpc.Server{}).Listen("tcp://[::1")
	if !errors.As(err, &ue) {
		t.Errorf("Listen = %v (%T), want a *url.Error", err, err)
	}
}

func TestErrorHTTPTruncatedBodyIsUnexpectedEOF(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
		brw.WriteString(`{"jsonrpc":"2.0","id":1,`)
		brw.Flush()
	}))
	defer ts.Close()
	c, err := jsonrpc.Dial(context.Background(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Call(context.Background(), "x", nil, nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Call = %v, want io.ErrUnexpectedEOF in its chain", err)
	}
}

func TestErrorStreamTruncatedMessageIsUnexpectedEOF(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		br := bufio.NewReader(a)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" { // the request's header section is over: answer half a message
				a.Write([]byte("Content-Length: 60\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,"))
				a.Close()
				return
			}
		}
	}()
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{Framing: jsonrpc.FramingHeader}), nil)
	defer c.Close()
	err := c.Call(context.Background(), "x", nil, nil)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Call = %v, want ErrClosed and io.ErrUnexpectedEOF in its chain", err)
	}
	if err := c.Wait(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Wait = %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestErrorWriteTimeoutIsDeadlineExceeded(t *testing.T) {
	a, b := loopbackPair(t) // a never reads
	_ = a
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: jsonrpc.NewMux(), WriteTimeout: 50 * time.Millisecond})
	defer c.Close()
	big := map[string]string{"s": strings.Repeat("x", 32<<20)} // more than the socket buffers hold
	err := c.Notify(context.Background(), "x", big)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("Notify = %v, want os.ErrDeadlineExceeded in its chain", err)
	}
}

func TestErrorCodecErrorsKeepTheirCause(t *testing.T) {
	mux := jsonrpc.NewMux()
	mux.HandleFunc("str", func(ctx context.Context, req *jsonrpc.Request) (any, error) { return "text", nil })
	c := pipe(&jsonrpc.Server{Handler: mux})
	defer c.Close()
	var n int
	err := c.Call(context.Background(), "str", nil, &n)
	var se *jsonv2.SemanticError
	if !errors.As(err, &se) {
		t.Errorf("decoding a string into an int: %v (%T), want a *json.SemanticError", err, err)
	}
	err = c.Call(context.Background(), "str", map[string]any{"f": func() {}}, nil)
	if !errors.As(err, &se) {
		t.Errorf("encoding a func: %v (%T), want a *json.SemanticError", err, err)
	}
	var b jsonrpc.Batch
	call := b.Call("str", nil, &n)
	if err := c.Batch(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if !errors.As(call.Err, &se) {
		t.Errorf("batch decode: %v (%T), want a *json.SemanticError", call.Err, call.Err)
	}
}

func TestErrorInvalidResponseIsErrInvalidResponse(t *testing.T) {
	const bad = `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`
	// On a stream.
	a, b := loopbackPair(t)
	rawPeer(t, a, func(req string) string { return bad + "\n" })
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	defer c.Close()
	if err := c.Call(context.Background(), "x", nil, nil); !errors.Is(err, jsonrpc.ErrInvalidResponse) {
		t.Errorf("stream Call = %v, want ErrInvalidResponse", err)
	}
	// Over HTTP.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, bad)
	}))
	defer ts.Close()
	hc, err := jsonrpc.Dial(context.Background(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	if err := hc.Call(context.Background(), "x", nil, nil); !errors.Is(err, jsonrpc.ErrInvalidResponse) {
		t.Errorf("HTTP Call = %v, want ErrInvalidResponse", err)
	}
}
