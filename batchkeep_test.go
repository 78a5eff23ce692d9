package jsonrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// A batch that carries a response to one of our calls besides a request
// is not given back to the stream once its request is served: the call
// reads its result from the message after that, while the stream reads
// on (into a reused buffer, were the message given back).
func TestMixedBatchKeepsItsMessage(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	big := strings.Repeat("a", 16<<10)
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		r := bufio.NewReader(nc)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &req) != nil || req.Method != "big" {
				continue // the reply to ping
			}
			// The response and a request in one batch, then as much again
			// for the stream to read next.
			fmt.Fprintf(nc, `[{"jsonrpc":"2.0","id":%s,"result":%q},{"jsonrpc":"2.0","method":"ping","id":1}]`+"\n", req.ID, big)
			fmt.Fprintf(nc, `{"jsonrpc":"2.0","method":"note","params":[%q]}`+"\n", strings.Repeat("b", 16<<10))
		}
	}()
	mux := NewMux()
	Register(mux, "ping", func(context.Context, struct{}) (string, error) { return "pong", nil })
	Register(mux, "note", func(context.Context, []string) (any, error) { return nil, nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, "tcp://"+l.Addr().String(), WithHandler(mux))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 200 {
		var got string
		if err := c.Call(ctx, "big", nil, &got); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if got != big {
			t.Fatalf("call %d: the result was overwritten: %d bytes, %q...", i, len(got), got[:min(len(got), 20)])
		}
	}
}
