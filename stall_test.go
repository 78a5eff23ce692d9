package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// stallingPeer accepts connections on l: the first reads requests and never
// answers (half-open: it keeps its socket); the later ones answer every
// request with "ok". It returns when l is closed.
func stallingPeer(l net.Listener) {
	for n := 0; ; n++ {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(nc)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if n == 0 {
					continue
				}
				_, after, _ := strings.Cut(line, `"id":`)
				id, _, _ := strings.Cut(after, "}")
				id, _, _ = strings.Cut(id, ",")
				fmt.Fprintf(nc, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"ok\"}\n", id)
			}
		}()
	}
}

// With WithStallTimeout, a connection whose peer stops answering while a
// call waits is taken as lost after the timeout, not at the call's
// deadline: the call fails with ErrConnectionLost and WithReconnect dials
// again, so the next call is answered.
func TestStallTimeoutRedials(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go stallingPeer(l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, "tcp://"+l.Addr().String(), jsonrpc.WithReconnect(), jsonrpc.WithStallTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	var got string
	err = c.Call(ctx, "work", nil, &got)
	if !errors.Is(err, jsonrpc.ErrConnectionLost) || !strings.Contains(err.Error(), "WithStallTimeout") {
		t.Fatalf("call to a peer that stopped answering: %v, want ErrConnectionLost from the stall timeout", err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Fatalf("the stalled call failed after %v, want about the 200ms stall timeout", d)
	}
	if err := c.Call(ctx, "work", nil, &got); err != nil || got != "ok" {
		t.Fatalf("the call after the stall: %q, %v; want an answer over a new connection", got, err)
	}
}

// A plain connection is closed by the stall timeout (ErrClosed, naming the
// stall); one that is idle, with no call in flight, is never closed by it.
func TestStallTimeoutPlain(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go stallingPeer(l)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const d = 100 * time.Millisecond

	stalled, err := jsonrpc.DialConn(ctx, "tcp://"+l.Addr().String(), jsonrpc.WithStallTimeout(d))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if err := stalled.Call(ctx, "work", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) || !strings.Contains(err.Error(), "WithStallTimeout") {
		t.Fatalf("got %v, want ErrClosed from the stall timeout", err)
	}

	idle, err := jsonrpc.DialConn(ctx, "tcp://"+l.Addr().String(), jsonrpc.WithStallTimeout(d))
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(4 * d)
	var got string
	if err := idle.Call(ctx, "work", nil, &got); err != nil || got != "ok" {
		t.Fatalf("a call on a connection idle past the stall timeout: %q, %v; want it answered", got, err)
	}
}

// A response that arrives slowly, in pieces closer together than the stall
// timeout, is read to its end: only a connection that reads nothing at all
// is taken as lost.
func TestStallTimeoutSlowResponse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const d = 200 * time.Millisecond
	go func() {
		nc, err := l.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(nc).ReadString('\n')
		if err != nil {
			return
		}
		_, after, _ := strings.Cut(line, `"id":`)
		id, _, _ := strings.Cut(after, "}")
		id, _, _ = strings.Cut(id, ",")
		msg := fmt.Sprintf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":\"%s\"}\n", id, strings.Repeat("x", 100))
		for i := 0; i < len(msg); i += 10 { // 11 pieces, 40ms apart: over 2 stall timeouts in all
			nc.Write([]byte(msg[i:min(i+10, len(msg))]))
			time.Sleep(d / 5)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.DialConn(ctx, "tcp://"+l.Addr().String(), jsonrpc.WithStallTimeout(d))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	if err := c.Call(ctx, "slow", nil, &got); err != nil || len(got) != 100 {
		t.Fatalf("a slow response: %d bytes, %v; want it read to its end", len(got), err)
	}
}
