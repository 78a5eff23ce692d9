package jsonrpc_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// hostilePeer listens on loopback and answers every line it reads with
// reply(line); what it reads is sent on got.
func hostilePeer(t *testing.T, reply func(line string) string) (addr string, got <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	lines := make(chan string, 16)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		sc := bufio.NewScanner(nc)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
			if r := reply(sc.Text()); r != "" {
				nc.Write([]byte(r + "\n"))
			}
		}
	}()
	return "tcp://" + ln.Addr().String(), lines
}

// TestHostileMalformedResponseFailsTheCall: a server's answer with the
// call's id and a result or an error, but broken otherwise (an unknown
// member, "jsonrpc" missing or not "2.0", a repeated member), fails that
// call at once with ErrInvalidResponse, as its documentation says, and is
// not answered back as if it were an invalid request (the call hung until
// its context ended, and the server was sent a -32600 for its response).
func TestHostileMalformedResponseFailsTheCall(t *testing.T) {
	for _, resp := range []string{
		`{"jsonrpc":"2.0","id":1,"result":1,"extra":2}`,
		`{"id":1,"result":1}`,
		`{"jsonrpc":"1.0","id":1,"result":1}`,
		`{"JSONRPC":"2.0","id":1,"result":1}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"result":2}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"x":1}`,
		`{"jsonrpc":"2.0","id":1}`, // a null result left out (omitempty): a bad response here, an invalid request to a server
	} {
		addr, got := hostilePeer(t, func(string) string { return resp })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := jsonrpc.Dial(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err = c.Call(ctx, "m", nil, nil)
		if !errors.Is(err, jsonrpc.ErrInvalidResponse) || time.Since(start) > time.Second {
			t.Errorf("%s: Call = %v after %v, want ErrInvalidResponse at once", resp, err, time.Since(start))
		}
		<-got // the request
		select {
		case l := <-got:
			t.Errorf("%s: the client answered the response with %s", resp, l)
		case <-time.After(100 * time.Millisecond):
		}
		c.Close()
		cancel()
	}
}

// TestHostileStatelessInvalidRequestSaysWhy: a 2026-07-28 POST whose
// message is not a valid request gets -32600 naming what is wrong with it,
// as on every other transport, not "a POST carries a request or a
// notification" (which it tried to be).
func TestHostileStatelessInvalidRequestSaysWhy(t *testing.T) {
	ts := statelessServer(t, jsonrpc.SSEAuto, nil)
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list","params":{` + meta2026 + `}}`:       `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string, number or null"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta2026 + `},"params":{}}`: `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: duplicate member name"}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`:                                                   `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: a POST carries a request or a notification"}}`,
	} {
		resp, got := post2026(t, ts.URL, body, h)
		if resp.StatusCode != http.StatusBadRequest || got != want {
			t.Errorf("%s:\n got %d %s\nwant 400 %s", body, resp.StatusCode, got, want)
		}
	}
}

// TestHostileBatchReplyWithoutResults: a batch reply whose elements carry
// the calls' ids and neither result nor error fails each call with
// ErrInvalidResponse; the client does not answer them as invalid requests.
func TestHostileBatchReplyWithoutResults(t *testing.T) {
	addr, got := hostilePeer(t, func(string) string { return `[{"jsonrpc":"2.0","id":1},{"jsonrpc":"2.0","id":2}]` })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b jsonrpc.Batch
	x, y := b.Call("m", nil, nil), b.Call("m", nil, nil)
	if err := c.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(x.Err, jsonrpc.ErrInvalidResponse) || !errors.Is(y.Err, jsonrpc.ErrInvalidResponse) {
		t.Errorf("calls: %v, %v; want ErrInvalidResponse", x.Err, y.Err)
	}
	if l := <-got; !strings.Contains(l, `"id":1`) || !strings.Contains(l, `"id":2`) {
		t.Fatalf("the batch sent: %s", l)
	}
	select {
	case l := <-got:
		t.Errorf("the client answered the reply with %s", l)
	case <-time.After(100 * time.Millisecond):
	}
}
