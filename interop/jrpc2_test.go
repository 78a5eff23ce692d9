package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/channel"
	"github.com/creachadair/jrpc2/handler"
	"github.com/creachadair/jrpc2/server"

	"github.com/seedhq/jsonrpc"
)

// The framings jrpc2 offers for byte streams. Our TCP server detects the
// framing per connection, so every one of them must work against it.
var jrpc2Framings = []struct {
	name    string
	framing channel.Framing
	ours    jsonrpc.Framing // the framing our client uses to talk to a jrpc2 server using it
}{
	{"line", channel.Line, jsonrpc.FramingLine},
	{"lsp", channel.LSP, jsonrpc.FramingHeader}, // Content-Type first, then Content-Length
	{"header-no-type", channel.Header(""), jsonrpc.FramingHeader},
}

// jrpc2Callbacks answers the requests our server sends to a jrpc2 client.
func jrpc2Callbacks(ctx context.Context, req *jrpc2.Request) (any, error) {
	switch req.Method() {
	case "client.add":
		var xs []int
		if err := req.UnmarshalParams(&xs); err != nil {
			return nil, err
		}
		total := 0
		for _, x := range xs {
			total += x
		}
		return total, nil
	case "client.fail":
		return nil, jrpc2.Errorf(-32050, "the client refuses").WithData(map[string]string{"who": "jrpc2"})
	}
	return nil, jrpc2.Errorf(jrpc2.MethodNotFound, "no callback %q", req.Method())
}

// dialJrpc2 connects a jrpc2 client to addr with the given framing. Server
// notifications go to notes.
func dialJrpc2(t *testing.T, addr string, framing channel.Framing, notes chan<- *jrpc2.Request) *jrpc2.Client {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cli := jrpc2.NewClient(framing(nc, nc), &jrpc2.ClientOptions{
		OnCallback: jrpc2Callbacks,
		OnNotify: func(req *jrpc2.Request) {
			if notes != nil {
				notes <- req
			}
		},
	})
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestJrpc2ClientAgainstOurTCPServer(t *testing.T) {
	for _, fr := range jrpc2Framings {
		t.Run(fr.name, func(t *testing.T) {
			rec := newRecorder()
			_, l := startServer(t, "tcp://127.0.0.1:0", rec)
			notes := make(chan *jrpc2.Request, 16)
			cli := dialJrpc2(t, hostPort(l.URL), fr.framing, notes)
			ctx := testContext(t)

			t.Run("positional and named params", func(t *testing.T) {
				var got float64
				if err := cli.CallResult(ctx, "subtract", []int{42, 23}, &got); err != nil || got != 19 {
					t.Errorf("subtract [42,23] = %v, %v; want 19", got, err)
				}
				if err := cli.CallResult(ctx, "subtract", map[string]int{"subtrahend": 23, "minuend": 42}, &got); err != nil || got != 19 {
					t.Errorf("subtract {subtrahend:23,minuend:42} = %v, %v; want 19", got, err)
				}
				var data []any
				if err := cli.CallResult(ctx, "get_data", nil, &data); err != nil || fmt.Sprint(data) != "[hello 5]" {
					t.Errorf("get_data = %v, %v; want [hello 5]", data, err)
				}
			})

			t.Run("echo keeps the JSON", func(t *testing.T) {
				params := json.RawMessage(`{"s":"h\u00e9llo \u2028 😀 \"q\" \\","n":[1,2.5,-3e-7,12345678901234567890],"o":{"z":null,"a":[true,false]}}`)
				rsp, err := cli.Call(ctx, "echo", params)
				if err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, []byte(rsp.ResultString()), params) {
					t.Errorf("echo returned %s, want %s", rsp.ResultString(), params)
				}
			})

			t.Run("errors round-trip", func(t *testing.T) {
				_, err := cli.Call(ctx, "error", map[string]any{"code": -32042, "message": "custom failure", "data": map[string]any{"why": "test", "n": 7}})
				var je *jrpc2.Error
				if !errors.As(err, &je) {
					t.Fatalf("error call: got %v (%T), want a *jrpc2.Error", err, err)
				}
				if je.Code != -32042 || je.Message != "custom failure" || !jsonEqual(t, je.Data, []byte(`{"why":"test","n":7}`)) {
					t.Errorf("error = code %d message %q data %s; want -32042, custom failure, {why,n}", je.Code, je.Message, je.Data)
				}
				_, err = cli.Call(ctx, "no_such_method", nil)
				if code := jrpc2.ErrorCode(err); code != jrpc2.MethodNotFound {
					t.Errorf("unknown method: code %d (%v), want -32601", code, err)
				}
				_, err = cli.Call(ctx, "subtract", []string{"x", "y"})
				if code := jrpc2.ErrorCode(err); code != jrpc2.InvalidParams {
					t.Errorf("bad params: code %d (%v), want -32602", code, err)
				}
				// The connection survives errors.
				var got float64
				if err := cli.CallResult(ctx, "sum", []float64{1, 2, 3.5}, &got); err != nil || got != 6.5 {
					t.Errorf("sum after errors = %v, %v", got, err)
				}
			})

			t.Run("notification", func(t *testing.T) {
				if err := cli.Notify(ctx, "record", map[string]string{"from": "jrpc2", "framing": fr.name}); err != nil {
					t.Fatal(err)
				}
				want := fmt.Sprintf(`{"from":"jrpc2","framing":%q}`, fr.name)
				if got := rec.next(t); !jsonEqual(t, got, []byte(want)) {
					t.Errorf("recorded %s, want %s", got, want)
				}
				// The server pushes a notification back to the jrpc2 client.
				select {
				case n := <-notes:
					if n.Method() != "recorded" || !jsonEqual(t, []byte(n.ParamString()), []byte(want)) {
						t.Errorf("server notification %s %s, want recorded %s", n.Method(), n.ParamString(), want)
					}
				case <-ctx.Done():
					t.Fatal("no server notification reached the jrpc2 client")
				}
			})

			t.Run("batch", func(t *testing.T) {
				rsps, err := cli.Batch(ctx, []jrpc2.Spec{
					{Method: "sum", Params: []int{1, 2, 3}},
					{Method: "record", Params: []string{"batched"}, Notify: true},
					{Method: "no_such_method"},
					{Method: "subtract", Params: map[string]int{"minuend": 1, "subtrahend": 3}},
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(rsps) != 3 {
					t.Fatalf("batch: %d responses, want 3", len(rsps))
				}
				var sum, diff float64
				if err := rsps[0].UnmarshalResult(&sum); err != nil || sum != 6 {
					t.Errorf("batch sum = %v, %v", sum, err)
				}
				if e := rsps[1].Error(); e == nil || e.Code != jrpc2.MethodNotFound {
					t.Errorf("batch unknown method: error %v, want -32601", e)
				}
				if err := rsps[2].UnmarshalResult(&diff); err != nil || diff != -2 {
					t.Errorf("batch subtract = %v, %v", diff, err)
				}
				if got := rec.next(t); !jsonEqual(t, got, []byte(`["batched"]`)) {
					t.Errorf("batched notification recorded %s", got)
				}
				select {
				case n := <-notes:
					if n.Method() != "recorded" || !jsonEqual(t, []byte(n.ParamString()), []byte(`["batched"]`)) {
						t.Errorf("server notification %s %s, want recorded [\"batched\"]", n.Method(), n.ParamString())
					}
				case <-ctx.Done():
					t.Fatal("no server notification for the batched record")
				}
			})

			t.Run("notification-only batch", func(t *testing.T) {
				rsps, err := cli.Batch(ctx, []jrpc2.Spec{
					{Method: "record", Params: []string{"n1"}, Notify: true},
					{Method: "update", Params: []int{1}, Notify: true},
				})
				if err != nil || len(rsps) != 0 {
					t.Fatalf("notification-only batch: %d responses, %v", len(rsps), err)
				}
				if got := rec.next(t); !jsonEqual(t, got, []byte(`["n1"]`)) {
					t.Errorf("recorded %s", got)
				}
				<-notes // the "recorded" echo
				// Nothing stray came back: the next call gets its own answer.
				var got float64
				if err := cli.CallResult(ctx, "sum", []int{4, 5}, &got); err != nil || got != 9 {
					t.Errorf("sum after the batch = %v, %v", got, err)
				}
			})

			t.Run("large messages", func(t *testing.T) {
				const n = 3 << 20
				var big string
				if err := cli.CallResult(ctx, "big", map[string]int{"n": n}, &big); err != nil || len(big) != n || strings.Trim(big, "x") != "" {
					t.Errorf("big %d: got %d bytes, %v", n, len(big), err)
				}
				s := strings.Repeat("é😀", 1<<18) // 1.5 MiB of multi-byte UTF-8
				var echoed []string
				if err := cli.CallResult(ctx, "echo", []string{s}, &echoed); err != nil || len(echoed) != 1 || echoed[0] != s {
					t.Errorf("echo of %d bytes: got %d strings, %v", len(s), len(echoed), err)
				}
			})

			t.Run("server calls the client back", func(t *testing.T) {
				var got int
				if err := cli.CallResult(ctx, "ask_peer", map[string]any{"method": "client.add", "params": []int{2, 3, 4}}, &got); err != nil || got != 9 {
					t.Errorf("ask_peer client.add = %v, %v; want 9", got, err)
				}
				// The client's error comes back to it through our server, as is.
				_, err := cli.Call(ctx, "ask_peer", map[string]any{"method": "client.fail"})
				var je *jrpc2.Error
				if !errors.As(err, &je) || je.Code != -32050 || je.Message != "the client refuses" || !jsonEqual(t, je.Data, []byte(`{"who":"jrpc2"}`)) {
					t.Errorf("ask_peer client.fail: %#v, want -32050 from the client", err)
				}
				var ok bool
				if err := cli.CallResult(ctx, "tell_peer", map[string]any{"method": "client.note", "params": map[string]int{"n": 1}}, &ok); err != nil || !ok {
					t.Fatalf("tell_peer = %v, %v", ok, err)
				}
				select {
				case n := <-notes:
					if n.Method() != "client.note" || !jsonEqual(t, []byte(n.ParamString()), []byte(`{"n":1}`)) {
						t.Errorf("server notification %s %s", n.Method(), n.ParamString())
					}
				case <-ctx.Done():
					t.Fatal("tell_peer's notification did not arrive")
				}
			})

			t.Run("concurrent calls match their responses", func(t *testing.T) {
				const n = 32
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						// Later calls sleep less, so responses come back out of order.
						var ms int64
						if err := cli.CallResult(ctx, "sleep", map[string]int64{"ms": int64(n - i)}, &ms); err != nil || ms != int64(n-i) {
							t.Errorf("sleep %d = %d, %v", n-i, ms, err)
						}
					})
				}
				wg.Wait()
			})
		})
	}
}

// jrpc2Service is the jrpc2 server our client talks to.
func jrpc2Service(notes chan<- string) handler.Map {
	return handler.Map{
		"Math.Sub": handler.NewPos(func(_ context.Context, a, b float64) float64 { return a - b }, "minuend", "subtrahend"),
		"Echo": handler.New(func(_ context.Context, req *jrpc2.Request) (json.RawMessage, error) {
			return json.RawMessage(req.ParamString()), nil
		}),
		"Fail": handler.New(func(context.Context) error {
			return jrpc2.Errorf(-32042, "jrpc2 failure").WithData(map[string]any{"why": "asked", "n": 7})
		}),
		"Record": handler.New(func(_ context.Context, req *jrpc2.Request) error {
			notes <- req.ParamString()
			return nil
		}),
		"AskClient": handler.New(func(ctx context.Context, req *jrpc2.Request) (json.RawMessage, error) {
			var p struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if err := req.UnmarshalParams(&p); err != nil {
				return nil, err
			}
			var params any // jrpc2 sends a nil json.RawMessage as "params":null, which the spec forbids
			if len(p.Params) > 0 {
				params = p.Params
			}
			rsp, err := jrpc2.ServerFromContext(ctx).Callback(ctx, p.Method, params)
			if err != nil {
				return nil, err
			}
			return json.RawMessage(rsp.ResultString()), nil
		}),
		"TellClient": handler.New(func(ctx context.Context, req *jrpc2.Request) error {
			return jrpc2.ServerFromContext(ctx).Notify(ctx, "client.note", json.RawMessage(req.ParamString()))
		}),
	}
}

// startJrpc2Server serves jrpc2Service on a loopback TCP port with framing.
func startJrpc2Server(t *testing.T, framing channel.Framing, notes chan<- string) string {
	t.Helper()
	lst, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- server.Loop(ctx, server.NetAccepter(lst, framing), server.Static(jrpc2Service(notes)), &server.LoopOptions{
			ServerOptions: &jrpc2.ServerOptions{AllowPush: true},
		})
	}()
	t.Cleanup(func() {
		cancel()
		lst.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the jrpc2 server did not stop")
		}
	})
	return lst.Addr().String()
}

func TestOurClientAgainstJrpc2Server(t *testing.T) {
	for _, fr := range jrpc2Framings {
		t.Run(fr.name, func(t *testing.T) {
			notes := make(chan string, 16)
			addr := startJrpc2Server(t, fr.framing, notes)
			ctx := testContext(t)

			// Our client also serves the jrpc2 server's callbacks.
			clientNotes := make(chan json.RawMessage, 16)
			mux := jsonrpc.NewMux()
			jsonrpc.Register(mux, "client.add", func(_ context.Context, xs []int) (int, error) {
				total := 0
				for _, x := range xs {
					total += x
				}
				return total, nil
			})
			jsonrpc.Register(mux, "client.note", func(_ context.Context, p json.RawMessage) (any, error) {
				clientNotes <- append(json.RawMessage(nil), p...)
				return nil, nil
			})
			cli, err := jsonrpc.Dial(ctx, "tcp://"+addr, jsonrpc.WithFraming(fr.ours), jsonrpc.WithHandler(mux), jsonrpc.WithLogger(testLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()

			t.Run("positional and named params", func(t *testing.T) {
				var got float64
				if err := cli.Call(ctx, "Math.Sub", []int{42, 23}, &got); err != nil || got != 19 {
					t.Errorf("Math.Sub [42,23] = %v, %v", got, err)
				}
				if err := cli.Call(ctx, "Math.Sub", map[string]int{"subtrahend": 23, "minuend": 42}, &got); err != nil || got != 19 {
					t.Errorf("Math.Sub by name = %v, %v", got, err)
				}
			})

			t.Run("echo keeps the JSON", func(t *testing.T) {
				params := json.RawMessage(`{"s":"h\u00e9llo \u2028 😀 \"q\" \\","n":[1,2.5,-3e-7,12345678901234567890],"o":{"z":null,"a":[true,false]}}`)
				var got json.RawMessage
				if err := cli.Call(ctx, "Echo", params, &got); err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(t, got, params) {
					t.Errorf("Echo returned %s, want %s", got, params)
				}
			})

			t.Run("errors round-trip", func(t *testing.T) {
				err := cli.Call(ctx, "Fail", nil, nil)
				var re *jsonrpc.Error
				if !errors.As(err, &re) {
					t.Fatalf("Fail: got %v (%T), want a *jsonrpc.Error", err, err)
				}
				if re.Code != -32042 || re.Message != "jrpc2 failure" || !jsonEqual(t, re.Data, []byte(`{"why":"asked","n":7}`)) {
					t.Errorf("Fail = code %d message %q data %s", re.Code, re.Message, re.Data)
				}
				err = cli.Call(ctx, "NoSuchMethod", nil, nil)
				if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
					t.Errorf("unknown method: %v, want -32601", err)
				}
				err = cli.Call(ctx, "Math.Sub", []string{"x", "y"}, nil)
				if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams}) {
					t.Errorf("bad params: %v, want -32602", err)
				}
			})

			t.Run("notification", func(t *testing.T) {
				if err := cli.Notify(ctx, "Record", map[string]string{"from": "seedhq"}); err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-notes:
					if !jsonEqual(t, []byte(got), []byte(`{"from":"seedhq"}`)) {
						t.Errorf("jrpc2 recorded %s", got)
					}
				case <-ctx.Done():
					t.Fatal("the notification did not reach the jrpc2 server")
				}
			})

			t.Run("batch", func(t *testing.T) {
				var b jsonrpc.Batch
				var diff float64
				var echoed json.RawMessage
				sub := b.Call("Math.Sub", []int{10, 4}, &diff)
				b.Notify("Record", []string{"batched"})
				missing := b.Call("NoSuchMethod", nil, nil)
				echo := b.Call("Echo", []int{1, 2}, &echoed)
				if err := cli.Batch(ctx, &b); err != nil {
					t.Fatal(err)
				}
				if sub.Err != nil || diff != 6 {
					t.Errorf("batch Math.Sub = %v, %v", diff, sub.Err)
				}
				if !errors.Is(missing.Err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
					t.Errorf("batch unknown method: %v", missing.Err)
				}
				if echo.Err != nil || !jsonEqual(t, echoed, []byte(`[1,2]`)) {
					t.Errorf("batch Echo = %s, %v", echoed, echo.Err)
				}
				select {
				case got := <-notes:
					if !jsonEqual(t, []byte(got), []byte(`["batched"]`)) {
						t.Errorf("jrpc2 recorded %s", got)
					}
				case <-ctx.Done():
					t.Fatal("the batched notification did not reach the jrpc2 server")
				}
			})

			t.Run("server calls our client back", func(t *testing.T) {
				var got int
				if err := cli.Call(ctx, "AskClient", map[string]any{"method": "client.add", "params": []int{2, 3, 4}}, &got); err != nil || got != 9 {
					t.Errorf("AskClient client.add = %v, %v; want 9", got, err)
				}
				err := cli.Call(ctx, "AskClient", map[string]any{"method": "client.nope"}, nil)
				if !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
					t.Errorf("AskClient client.nope: %v, want -32601 from our client", err)
				}
				if err := cli.Call(ctx, "TellClient", map[string]int{"n": 1}, nil); err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-clientNotes:
					if !jsonEqual(t, got, []byte(`{"n":1}`)) {
						t.Errorf("client.note got %s", got)
					}
				case <-ctx.Done():
					t.Fatal("the jrpc2 server's notification did not reach our client")
				}
			})

			t.Run("concurrent calls match their responses", func(t *testing.T) {
				var wg sync.WaitGroup
				for i := range 32 {
					wg.Go(func() {
						var got float64
						if err := cli.Call(ctx, "Math.Sub", []int{i, 1}, &got); err != nil || got != float64(i-1) {
							t.Errorf("Math.Sub [%d,1] = %v, %v", i, got, err)
						}
					})
				}
				wg.Wait()
			})
		})
	}
}
