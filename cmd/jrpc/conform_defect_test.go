package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
)

// defectEnv makes the test binary a stdio server with the defect it names
// (the --exec target of TestConformServerDefects).
const defectEnv = "JRPC_TEST_CONFORM_DEFECT"

func init() {
	if d := os.Getenv(defectEnv); d != "" {
		serveLines(os.Stdin, os.Stdout, defective(d))
		os.Exit(0)
	}
}

// defective returns a server of no methods (our own, through Process)
// with one planted defect, as a function from a line or body to its reply
// (nil: none).
func defective(defect string) func([]byte) []byte {
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux()}
	process := func(in []byte) []byte { return srv.Process(context.Background(), in) }
	switch defect {
	case "batch-call-unanswered": // the last Response of a batch is dropped
		return func(in []byte) []byte {
			out := process(in)
			var items []json.RawMessage
			if json.Unmarshal(out, &items) != nil || len(items) < 2 {
				return out
			}
			b, _ := json.Marshal(items[:len(items)-1])
			return b
		}
	case "rest-of-line-ignored": // only the first JSON value of a line is read
		return func(in []byte) []byte {
			var first json.RawMessage
			if json.NewDecoder(bytes.NewReader(in)).Decode(&first) != nil {
				return process(in)
			}
			return process(first)
		}
	case "invalid-id-accepted": // an id that is an object, array or boolean is served as any other
		return func(in []byte) []byte {
			var m map[string]json.RawMessage
			if json.Unmarshal(in, &m) != nil || len(m["id"]) == 0 || !strings.ContainsRune("{[tf", rune(m["id"][0])) {
				return process(in)
			}
			id := m["id"]
			m["id"] = json.RawMessage(`"planted"`)
			b, _ := json.Marshal(m)
			return bytes.Replace(process(b), []byte(`"planted"`), id, 1)
		}
	case "ids-rounded": // numeric ids go through a 64-bit float, as in JavaScript
		return func(in []byte) []byte {
			return idNumber.ReplaceAllFunc(process(in), func(m []byte) []byte {
				f, err := strconv.ParseFloat(string(m[len(`"id":`):]), 64)
				if err != nil {
					return m
				}
				return strconv.AppendFloat([]byte(`"id":`), f, 'g', -1, 64)
			})
		}
	}
	return process
}

var idNumber = regexp.MustCompile(`"id":-?[0-9][0-9.eE+-]*`)

// serveLines serves newline-delimited messages from r on w.
func serveLines(r io.Reader, w io.Writer, serve func([]byte) []byte) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if out := serve(line); out != nil {
				if _, err := w.Write(append(out, '\n')); err != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// startDefective serves the defect on transport (http, ws, tcp, unix) for
// the test's duration and returns its URL.
func startDefective(t *testing.T, transport, defect string) string {
	serve := defective(defect)
	switch transport {
	case "http":
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			out := serve(body)
			if out == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(out)
		}))
		t.Cleanup(hs.Close)
		return hs.URL
	case "ws":
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			defer c.CloseNow()
			for {
				_, msg, err := c.Read(r.Context())
				if err != nil {
					return
				}
				if out := serve(msg); out != nil && c.Write(r.Context(), websocket.MessageText, out) != nil {
					return
				}
			}
		}))
		t.Cleanup(hs.Close)
		return "ws" + strings.TrimPrefix(hs.URL, "http")
	}
	network, addr, url := "tcp", "127.0.0.1:0", "tcp://"
	if transport == "unix" {
		network, addr, url = "unix", filepath.Join(t.TempDir(), "d.sock"), "unix://"
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); serveLines(c, c, serve) }()
		}
	}()
	return url + l.Addr().String()
}

// TestConformServerDefects runs jrpc conform against servers with one
// planted defect each, on every transport where the defect can occur: exit
// 1, and exactly the defect's MUST checks fail. Without a defect the same
// servers pass with exit 0.
func TestConformServerDefects(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"http", "ws", "tcp", "unix", "stdio"}
	for _, c := range []struct {
		defect     string
		transports []string
		fails      []string // the MUST checks that fail
		summary    string   // a line of the failures by cause
	}{
		{"none", all, nil, "every MUST check passed"},
		{"batch-call-unanswered", all, []string{"batch/calls-answered", "batch/invalid-element-code", "batch/duplicate-ids"},
			"  batch: 3 checks fail (3 MUST) because calls of a batch are left unanswered: batch/calls-answered, batch/invalid-element-code, batch/duplicate-ids\n"},
		{"rest-of-line-ignored", []string{"tcp", "unix", "stdio"}, []string{"framing/text-after-message", "framing/two-messages-one-line"},
			"  framing: 2 checks fail (2 MUST) because the rest of a line is dropped silently: framing/text-after-message, framing/two-messages-one-line\n"},
		{"invalid-id-accepted", all, []string{"id/invalid-object", "id/invalid-array", "id/invalid-bool"},
			"  id: 3 checks fail (3 MUST) because error -32601 where §5.1 gives -32600: id/invalid-object, id/invalid-array, id/invalid-bool\n"},
		{"ids-rounded", []string{"http"}, []string{"id/int-2^53+1", "id/int-2^63", "id/int-2^64+1", "id/int-negative-2^63-1", "id/fraction-long"},
			"  id: 5 checks fail (5 MUST) because numbers are rounded (read as 64-bit floats): id/int-2^53+1, id/int-2^63, id/int-2^64+1, id/int-negative-2^63-1, id/fraction-long\n"},
	} {
		for _, transport := range c.transports {
			t.Run(c.defect+"/"+transport, func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "r.json")
				args := []string{"--exec", self, "conform", "--json", file}
				if transport != "stdio" {
					args = []string{"conform", startDefective(t, transport, c.defect), "--json", file}
				}
				r := runEnv(t, []string{defectEnv + "=" + c.defect}, "", args...)
				want := 1
				if c.fails == nil {
					want = 0
				}
				var failed []string
				for _, ch := range readReport(t, file).Checks {
					if ch.Status == "FAIL" && ch.Level == "MUST" {
						failed = append(failed, ch.Name)
					}
				}
				if r.code != want || !slices.Equal(failed, c.fails) || !strings.Contains(r.stdout, c.summary) {
					t.Fatalf("exit %d, failed MUST checks %v; want exit %d, %v and the line %q\n%s%s", r.code, failed, want, c.fails, c.summary, r.stdout, r.stderr)
				}
			})
		}
	}
}
