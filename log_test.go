package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// recordingHandler keeps every record it is given, its attributes flattened
// into a map (the way testing/slogtest checks handlers).
type recordingHandler struct {
	mu      sync.Mutex
	records []logRecord
}

type logRecord struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.Resolve().Any()
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, rec)
	h.mu.Unlock()
	return nil
}

func (h *recordingHandler) has(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Msg == msg {
			return true
		}
	}
	return false
}

// waitFor waits (at most 5 s) until cond holds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
	}
}

// take returns the records whose message is one of msgs, and forgets all.
func (h *recordingHandler) take(msgs ...string) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range h.records {
		for _, m := range msgs {
			if r.Msg == m {
				out = append(out, r)
			}
		}
	}
	h.records = nil
	return out
}

func logTestServer(h *recordingHandler) *jsonrpc.Server {
	mux := jsonrpc.NewMux()
	type subParams struct {
		Minuend    float64 `json:"minuend"`
		Subtrahend float64 `json:"subtrahend"`
	}
	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p subParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	mux.HandleFunc("fail", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return nil, errors.New("disk on fire")
	})
	mux.HandleFunc("boom", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		panic("boom")
	})
	mux.HandleFunc("gaveup", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return nil, context.DeadlineExceeded
	})
	logger := slog.New(h)
	return &jsonrpc.Server{
		Handler: mux,
		Logger:  logger,
		Middleware: []jsonrpc.Middleware{jsonrpc.LogCalls(logger, &jsonrpc.LogOptions{
			Params:    true,
			MaxParams: 12,
			Principal: func(ctx context.Context) string { return "alice" },
		})},
	}
}

// checkRecord compares a record field by field; duration is checked to be
// positive and then left out.
func checkRecord(t *testing.T, got logRecord, level slog.Level, msg string, want map[string]any) {
	t.Helper()
	if got.Level != level || got.Msg != msg {
		t.Errorf("record %v %q, want %v %q", got.Level, got.Msg, level, msg)
	}
	if _, ok := want["duration"]; ok {
		delete(want, "duration") // a record without one
	} else {
		d, ok := got.Attrs["duration"].(time.Duration)
		if !ok || d <= 0 {
			t.Errorf("duration = %v", got.Attrs["duration"])
		}
		delete(got.Attrs, "duration")
	}
	if remote, _ := got.Attrs["remote"].(string); remote != "" && want["remote"] == "*" {
		want["remote"] = remote
	}
	if !reflect.DeepEqual(got.Attrs, want) {
		t.Errorf("%s attrs:\n got %v\nwant %v", msg, got.Attrs, want)
	}
}

func TestLogCallsOneRecordPerOutcome(t *testing.T) {
	for _, transport := range []string{"tcp", "http"} {
		t.Run(transport, func(t *testing.T) {
			h := &recordingHandler{}
			srv := logTestServer(h)
			l, err := srv.Listen(transport + "://127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown(context.Background())
			send := dialRaw(t, h, transport, l.URL)

			cases := []struct {
				req   string
				level slog.Level
				msg   string
				want  map[string]any
			}{
				{`{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":1}`, slog.LevelInfo, "call",
					map[string]any{"method": "subtract", "id": "1", "outcome": "ok", "params": `{"minuend":4…`}},
				{`{"jsonrpc":"2.0","method":"subtract","params":{"minuend":"x"},"id":"a"}`, slog.LevelWarn, "call",
					map[string]any{"method": "subtract", "id": `"a"`, "outcome": "error", "code": int64(-32602), "params": `{"minuend":"…`}},
				{`{"jsonrpc":"2.0","method":"nope","id":3}`, slog.LevelWarn, "call",
					map[string]any{"method": "nope", "id": "3", "outcome": "error", "code": int64(-32601), "error": "method not found: nope"}},
				{`{"jsonrpc":"2.0","method":"fail","id":4}`, slog.LevelError, "call",
					map[string]any{"method": "fail", "id": "4", "outcome": "error", "code": int64(-32603), "error": "disk on fire"}},
				{`{"jsonrpc":"2.0","method":"boom","id":5}`, slog.LevelError, "call",
					map[string]any{"method": "boom", "id": "5", "outcome": "error", "code": int64(-32603), "error": "internal error: the handler panicked"}},
				{`{"jsonrpc":"2.0","method":"gaveup","id":6}`, slog.LevelInfo, "call",
					map[string]any{"method": "gaveup", "id": "6", "outcome": "canceled", "code": int64(-32001), "error": "context deadline exceeded"}},
				{`{"jsonrpc":"2.0","method":"subtract","params":[3,1]}`, slog.LevelInfo, "notification",
					map[string]any{"method": "subtract", "outcome": "ok", "params": `[3,1]`}},
			}
			for _, c := range cases {
				send(c.req, !strings.Contains(c.req, `"id"`))
				recs := h.take("call", "notification")
				if len(recs) != 1 {
					t.Fatalf("%s: %d records, want 1: %v", c.req, len(recs), recs)
				}
				c.want["transport"] = transport
				c.want["remote"] = "*"
				c.want["principal"] = "alice"
				if c.want["code"] == int64(-32602) {
					c.want["error"] = recs[0].Attrs["error"] // the problem's wording is the validator's
					if !strings.HasPrefix(recs[0].Attrs["error"].(string), "invalid params") {
						t.Errorf("error = %v", recs[0].Attrs["error"])
					}
				}
				checkRecord(t, recs[0], c.level, c.msg, c.want)
			}

			// A parse error never reaches a handler: the server logs it, once.
			send(`{"jsonrpc":"2.0",`, false)
			recs := h.take("call", "notification", "jsonrpc: parse error")
			if len(recs) != 1 || recs[0].Msg != "jsonrpc: parse error" {
				t.Fatalf("parse error records: %v", recs)
			}
			checkRecord(t, recs[0], slog.LevelDebug, "jsonrpc: parse error", map[string]any{
				"transport": transport, "remote": "*", "code": int64(-32700), "error": recs[0].Attrs["error"], "duration": nil,
			})
			send(`[]`, false)
			if recs := h.take("jsonrpc: invalid request"); len(recs) != 1 || recs[0].Attrs["code"] != int64(-32600) {
				t.Fatalf("invalid request records: %v", recs)
			}
			if transport == "tcp" {
				// The end of a connection is logged once, with its peer.
				srv.Shutdown(context.Background())
				waitFor(t, func() bool { return h.has("jsonrpc: connection closed") })
				if recs := h.take("jsonrpc: connection closed"); len(recs) != 1 || recs[0].Attrs["transport"] != "tcp" || recs[0].Attrs["remote"] == "" {
					t.Fatalf("connection closed records: %v", recs)
				}
			}
		})
	}
}

// dialRaw returns a function that sends one raw message to url and waits
// for its reply (or, for a notification, for the server to have served it).
func dialRaw(t *testing.T, h *recordingHandler, transport, url string) func(msg string, notification bool) {
	t.Helper()
	switch transport {
	case "tcp":
		nc, err := net.Dial("tcp", strings.TrimPrefix(url, "tcp://"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { nc.Close() })
		br := bufio.NewReader(nc)
		return func(msg string, notification bool) {
			if notification {
				nc.Write([]byte(msg + "\n"))
				waitFor(t, func() bool { return h.has("notification") })
				return
			}
			callLine(t, nc, br, msg)
		}
	default:
		return func(msg string, notification bool) {
			resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(msg)))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}
}

// No record carries a header (a bearer token) or, unless asked, params.
func TestLogCallsNeverLogsTokens(t *testing.T) {
	h := &recordingHandler{}
	logger := slog.New(h)
	mux := jsonrpc.NewMux()
	mux.HandleFunc("login", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return nil, jsonrpc.Errorf(-32000, "denied")
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: logger, Middleware: []jsonrpc.Middleware{jsonrpc.LogCalls(logger, nil)}}
	l, err := srv.Listen("http://127.0.0.1:0/")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	for _, body := range []string{`{"jsonrpc":"2.0","method":"login","params":{"password":"s3cret"},"id":1}`, `{"jsonrpc":"2.0","method":"login","params":{"password":"s3cret"`} {
		req, _ := http.NewRequest("POST", l.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	recs := h.take("call", "jsonrpc: parse error")
	if len(recs) != 2 {
		t.Fatalf("records: %v", recs)
	}
	for _, r := range recs {
		for k, v := range r.Attrs {
			if strings.Contains(fmt.Sprint(v), "s3cret") {
				t.Errorf("%s record: %s=%v leaks the secret", r.Msg, k, v)
			}
		}
	}
}
