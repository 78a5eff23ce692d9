package jsonrpc_test

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"reflect"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// vector is one conformance case (see testdata/conformance/README in shared/).
type vector struct {
	Name    string         `json:"name"`
	Request string         `json:"request"`
	Expect  jsontext.Value `json:"expect"`
}

type expectation struct {
	Response  string         `json:"response"` // none, single, batch
	ID        jsontext.Value `json:"id"`
	Result    jsontext.Value `json:"result"`
	ErrorCode *int64         `json:"error_code"`
	Items     []expectation  `json:"items"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	data, err := os.ReadFile("testdata/conformance/spec-examples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	for line := range bytes.Lines(data) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var v vector
		if err := jsonv2.Unmarshal(line, &v, jsonv2.RejectUnknownMembers(false)); err != nil {
			t.Fatalf("bad vector %s: %v", line, err)
		}
		vs = append(vs, v)
	}
	if len(vs) < 10 {
		t.Fatalf("only %d vectors", len(vs))
	}
	return vs
}

// roundTrip sends one message and returns the reply, or nil when the
// transport says no reply came.
type roundTrip func(t *testing.T, request string) []byte

// checkVectors runs every vector through rt.
func checkVectors(t *testing.T, rt roundTrip) {
	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var exp expectation
			if err := jsonv2.Unmarshal(v.Expect, &exp); err != nil {
				t.Fatal(err)
			}
			reply := rt(t, v.Request)
			checkReply(t, reply, exp)
		})
	}
}

func checkReply(t *testing.T, reply []byte, exp expectation) {
	t.Helper()
	switch exp.Response {
	case "none":
		if reply != nil {
			t.Fatalf("expected no response, got %s", reply)
		}
	case "single":
		if reply == nil {
			t.Fatal("expected a response, got none")
		}
		checkResponse(t, reply, exp)
	case "batch":
		var items []jsontext.Value
		if err := jsonv2.Unmarshal(reply, &items); err != nil {
			t.Fatalf("expected a batch array, got %s", reply)
		}
		if len(items) != len(exp.Items) {
			t.Fatalf("got %d responses, want %d: %s", len(items), len(exp.Items), reply)
		}
		used := make([]bool, len(items))
	next:
		for _, want := range exp.Items {
			for i, it := range items {
				if !used[i] && matches(it, want) {
					used[i] = true
					continue next
				}
			}
			t.Fatalf("no response matches %+v in %s", want, reply)
		}
	default:
		t.Fatalf("unknown expectation %q", exp.Response)
	}
}

// wireResponse is a response decoded with its members kept raw.
type wireResponse struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Result  jsontext.Value `json:"result"`
	Error   *struct {
		Code    int64          `json:"code"`
		Message string         `json:"message"`
		Data    jsontext.Value `json:"data"`
	} `json:"error"`
}

func decodeResponse(t *testing.T, b []byte) wireResponse {
	t.Helper()
	var r wireResponse
	if err := jsonv2.Unmarshal(b, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
		t.Fatalf("invalid response %s: %v", b, err)
	}
	if r.JSONRPC != "2.0" || r.ID == nil || (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("malformed response %s", b)
	}
	return r
}

func checkResponse(t *testing.T, b []byte, exp expectation) {
	t.Helper()
	if !matches(b, exp) {
		t.Fatalf("response %s does not match id=%s result=%s error_code=%v", b, exp.ID, exp.Result, exp.ErrorCode)
	}
	decodeResponse(t, b)
}

func matches(b []byte, exp expectation) bool {
	var r wireResponse
	if jsonv2.Unmarshal(b, &r, jsonv2.RejectUnknownMembers(true)) != nil || r.JSONRPC != "2.0" {
		return false
	}
	if string(r.ID) != string(exp.ID) {
		return false // ids compare byte for byte
	}
	if exp.ErrorCode != nil {
		return r.Error != nil && r.Error.Code == *exp.ErrorCode && r.Result == nil
	}
	return r.Error == nil && sameJSON(r.Result, exp.Result)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if jsonv2.Unmarshal(a, &x) != nil || jsonv2.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// newDemoServer returns a server of the demo service that runs one handler at
// a time, so that "no reply" can be told by a sentinel call sent after.
func newDemoServer() *jsonrpc.Server {
	return &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxConcurrency: 1}
}

const sentinel = `{"jsonrpc":"2.0","method":"echo","params":["sentinel"],"id":"sentinel-id"}`

// streamRoundTrip returns a roundTrip over a newline-framed stream: it
// writes the request and a sentinel, and reads lines until the sentinel's
// reply, which must come last.
func streamRoundTrip(nc net.Conn) roundTrip {
	br := bufio.NewReader(nc)
	return func(t *testing.T, request string) []byte {
		t.Helper()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write([]byte(request + "\n" + sentinel + "\n")); err != nil {
			t.Fatal(err)
		}
		var replies [][]byte
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				t.Fatalf("read: %v (got %q)", err, replies)
			}
			if bytes.Contains(line, []byte(`"sentinel-id"`)) {
				break
			}
			replies = append(replies, bytes.TrimSpace(line))
		}
		switch len(replies) {
		case 0:
			return nil
		case 1:
			return replies[0]
		}
		t.Fatalf("more than one reply: %q", replies)
		return nil
	}
}

func TestConformancePipe(t *testing.T) {
	a, b := net.Pipe()
	srv := newDemoServer()
	conn := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	defer conn.Close()
	defer b.Close()
	checkVectors(t, streamRoundTrip(b))
}

func TestConformanceTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newDemoServer()
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	checkVectors(t, streamRoundTrip(nc))
}
