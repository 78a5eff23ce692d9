package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/conformance"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// defective serves our server's answers changed by change (nil: no answer).
func defective(t *testing.T, change func(in, out []byte) []byte) conformance.Target {
	s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in, _ := io.ReadAll(r.Body)
		out := change(in, s.Process(r.Context(), in))
		if out == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return &conformance.HTTPTarget{URL: srv.URL}
}

func status(rep *conformance.Report, name string) conformance.Status {
	for _, c := range rep.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return "missing"
}

// TestDefectsCaught: each defect fails its check, at MUST, and nothing
// else passes that should not.
func TestDefectsCaught(t *testing.T) {
	for _, c := range []struct {
		name, check string
		change      func(in, out []byte) []byte
	}{
		{"answers notifications", "notification/params-array", func(in, out []byte) []byte {
			if out == nil && strings.HasPrefix(string(in), "{") {
				return []byte(`{"jsonrpc":"2.0","id":null,"result":null}`)
			}
			return out
		}},
		{"empty array for []", "batch/empty", func(in, out []byte) []byte {
			if string(in) == "[]" {
				return []byte("[]")
			}
			return out
		}},
		{"jsonrpc 1.1 in responses", "response/jsonrpc", func(_, out []byte) []byte {
			return []byte(strings.ReplaceAll(string(out), `"jsonrpc":"2.0"`, `"jsonrpc":"1.1"`))
		}},
		{"error code as a string", "response/error-object", func(_, out []byte) []byte {
			return regexp.MustCompile(`"code":(-?[0-9]+)`).ReplaceAll(out, []byte(`"code":"$1"`))
		}},
		{"ids lose their escapes' value", "id/string-escaped", func(_, out []byte) []byte {
			return []byte(strings.ReplaceAll(string(out), `\u00e9`, `e`))
		}},
		{"a call of a batch left unanswered", "batch/calls-answered", func(_, out []byte) []byte {
			if i := strings.LastIndex(string(out), `,{"jsonrpc"`); strings.HasPrefix(string(out), "[") && i > 0 {
				return append(out[:i:i], ']')
			}
			return out
		}},
		{"a boolean id served as any other", "id/invalid-bool", func(in, out []byte) []byte {
			if strings.Contains(string(in), `"id":true`) {
				return []byte(`{"jsonrpc":"2.0","id":true,"error":{"code":-32601,"message":"no such method"}}`)
			}
			return out
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := (&conformance.Suite{}).Check(context.Background(), defective(t, c.change))
			if err != nil {
				t.Fatal(err)
			}
			if got := status(rep, c.check); got != conformance.Fail || rep.OK() {
				t.Fatalf("%s: %s (report OK: %v)", c.check, got, rep.OK())
			}
		})
	}
}

// TestDroppedConnection: a stream server that closes the connection on
// every third message fails the checks it was answering, and
// connection/kept names them.
func TestDroppedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				ch := jsonrpc.NewStream(c, jsonrpc.StreamOptions{})
				for n := 1; ; n++ {
					msg, err := ch.Recv()
					if err != nil || n%3 == 0 {
						return
					}
					if out := s.Process(context.Background(), msg); out != nil {
						ch.Send(out)
					}
				}
			}()
		}
	}()
	target, _ := conformance.URL("tcp://"+l.Addr().String(), jsonrpc.FramingLine, nil)
	rep, err := (&conformance.Suite{Timeout: time.Second, Only: regexp.MustCompile(`^(id/|connection/)`)}).Check(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if status(rep, "connection/kept") != conformance.Fail || rep.OK() {
		t.Fatalf("connection/kept: %s", status(rep, "connection/kept"))
	}
	for _, c := range rep.Checks {
		if c.Name == "connection/kept" && !strings.Contains(c.Detail, "the server dropped the connection") {
			t.Errorf("detail: %s", c.Detail)
		}
	}
}

// TestUnreachable: a target that cannot be reached at the start is an
// error wrapping ErrUnreachable, not a report.
func TestUnreachable(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	target, _ := conformance.URL("tcp://"+addr, jsonrpc.FramingLine, nil)
	if _, err := (&conformance.Suite{}).Check(context.Background(), target); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("err = %v", err)
	}
}

// TestRestOfLineIgnored: a line-framed server that reads the first JSON
// value of each line and drops the rest fails the framing checks, by
// cause; our own server (Listen) passes them.
func TestRestOfLineIgnored(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadBytes('\n')
					if err != nil {
						return
					}
					var first json.RawMessage
					if json.NewDecoder(bytes.NewReader(line)).Decode(&first) == nil {
						line = first
					}
					if out := s.Process(context.Background(), line); out != nil {
						c.Write(append(out, '\n'))
					}
				}
			}()
		}
	}()
	only := regexp.MustCompile(`^framing/`)
	for _, c := range []struct {
		url   string
		fails []string
	}{
		{"tcp://" + l.Addr().String(), []string{"framing/text-after-message", "framing/two-messages-one-line"}},
		{listen(t, "tcp://127.0.0.1:0"), nil},
	} {
		target, _ := conformance.URL(c.url, jsonrpc.FramingLine, nil)
		rep, err := (&conformance.Suite{Only: only}).Check(context.Background(), target)
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, r := range rep.Failed(conformance.MUST) {
			failed = append(failed, r.Name)
			if r.Cause != "the rest of a line is dropped silently" {
				t.Errorf("%s: cause %q", r.Name, r.Cause)
			}
		}
		if len(rep.Checks) != 3 || strings.Join(failed, " ") != strings.Join(c.fails, " ") {
			t.Errorf("%s: %d checks, failed %v; want 3 and %v", c.url, len(rep.Checks), failed, c.fails)
		}
	}
}

// TestFramingAnswersOutOfOrder: a stream does not order responses, so a
// server that answers the calls of a framing check after the request sent
// behind them (here: those calls are slower) passes the framing checks.
func TestFramingAnswersOutOfOrder(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var mu sync.Mutex
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadBytes('\n')
					if err != nil {
						return
					}
					go func() {
						if bytes.Contains(line, []byte(`"f-`)) {
							time.Sleep(100 * time.Millisecond)
						}
						if out := s.Process(context.Background(), line); out != nil {
							mu.Lock()
							c.Write(append(out, '\n'))
							mu.Unlock()
						}
					}()
				}
			}()
		}
	}()
	target, _ := conformance.URL("tcp://"+l.Addr().String(), jsonrpc.FramingLine, nil)
	rep, err := (&conformance.Suite{Only: regexp.MustCompile(`^framing/`)}).Check(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 3 || len(rep.Failed(conformance.MUST)) != 0 {
		for _, r := range rep.Checks {
			t.Logf("%s %v %s", r.Name, r.Status, r.Detail)
		}
		t.Errorf("%d checks, failed %v; want 3, none failed", len(rep.Checks), rep.Failed(conformance.MUST))
	}
}
