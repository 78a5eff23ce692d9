package demo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// MCP logging in the demo: logging/setLevel checks the level; a client
// that set notice (or below) gets one notifications/message for a tool
// call it cancelled, once the tool has stopped; a client that set no level,
// or a more severe one, gets none.
func TestMCPLogCancelledTool(t *testing.T) {
	srvSide, cliSide := net.Pipe()
	// ended hears of each tools/call whose handler has returned (its log,
	// if any, decided): a cancelled call's handler may end after the
	// requests that follow the cancel, and then log under their level.
	ended := make(chan struct{}, 8)
	toolEnded := func(next jsonrpc.Handler) jsonrpc.Handler {
		return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			v, err := next.ServeRPC(ctx, req)
			if req.Method == "tools/call" {
				ended <- struct{}{}
			}
			return v, err
		})
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMCPMux(), Convention: jsonrpc.ConventionMCP, Middleware: []jsonrpc.Middleware{toolEnded}}
	c := jsonrpc.NewConn(jsonrpc.NewStream(srvSide, jsonrpc.StreamOptions{Framing: jsonrpc.FramingLine}), srv)
	defer func() {
		cliSide.Close()
		c.Close()
		<-c.Done()
	}()
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(cliSide)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	send := func(msg string) {
		t.Helper()
		cliSide.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(cliSide, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var logs []string
	// await reads until the reply with id, keeping the log messages seen.
	await := func(id string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the connection ended")
				}
				if strings.Contains(l, `"notifications/message"`) {
					logs = append(logs, l)
					continue
				}
				if strings.Contains(l, `"id":`+id+`,`) || strings.Contains(l, `"id":`+id+`}`) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no reply %s", id)
			}
		}
	}
	cancelSleep := func(id string) {
		t.Helper()
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`)
		time.Sleep(50 * time.Millisecond) // let it start (a cancel for an unknown id is ignored)
		send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`)
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("tools/call %s still running 10 s after its cancel", id)
		}
	}

	cancelSleep("1") // no level set: no log
	send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	await("2")
	send(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"loud"}}`)
	if r := await("3"); !strings.Contains(r, `"code":-32602`) {
		t.Errorf("an unknown level: %s, want -32602", r)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"error"}}`)
	if r := await("4"); r != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Errorf("setLevel: %s", r)
	}
	cancelSleep("5") // error is more severe than notice: no log
	send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	await("6")
	send(`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"notice"}}`)
	await("7")
	start := time.Now()
	cancelSleep("8")
	for len(logs) == 0 && time.Since(start) < 10*time.Second {
		send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
		await("9")
	}
	if len(logs) != 1 {
		t.Fatalf("%d log messages, want 1 (for the call cancelled at level notice): %q", len(logs), logs)
	}
	var n struct {
		Params struct {
			Level  string `json:"level"`
			Logger string `json:"logger"`
			Data   struct {
				Event   string `json:"event"`
				Tool    string `json:"tool"`
				AfterMS int64  `json:"after_ms"`
				Reason  string `json:"reason"`
			} `json:"data"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(logs[0]), &n); err != nil {
		t.Fatal(err)
	}
	p := n.Params
	if p.Level != "notice" || p.Logger != "jrpc-demo" || p.Data.Event != "cancelled" || p.Data.Tool != "sleep" || p.Data.AfterMS < 0 || p.Data.AfterMS > 10000 || p.Data.Reason == "" {
		t.Errorf("log message %s", logs[0])
	}
}
