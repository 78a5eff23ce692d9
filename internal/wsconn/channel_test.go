package wsconn

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

var errClosed = errors.New("closed")

type tooLarge struct{ limit int64 }

func (e tooLarge) Error() string { return "too large" }

// pair returns a server Channel (limit bytes) and the raw client socket.
func pair(t *testing.T, limit int64) (*Channel, *websocket.Conn) {
	t.Helper()
	got := make(chan *Channel, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wc, err := websocket.Accept(SmallBuffers{w, 512}, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		got <- New(wc, Options{Limit: limit, Closed: errClosed, TooLarge: func(l int64) error { return tooLarge{l} }})
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-got:
		// The client goes first: the closing handshake then ends at once.
		t.Cleanup(func() { c.CloseNow(); ch.Close() })
		return ch, c
	case <-ctx.Done():
		c.CloseNow()
		t.Fatal("no server channel")
	}
	return nil, nil
}

// Messages go both ways, whole or written in frames; a normal close is io.EOF.
func TestChannelMessages(t *testing.T) {
	ch, c := pair(t, 1024)
	ctx := context.Background()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if msg, err := ch.Recv(); err != nil || string(msg) != `{"a":1}` {
		t.Fatalf("Recv: %q %v", msg, err)
	}
	if err := ch.Send([]byte(`[1]`)); err != nil {
		t.Fatal(err)
	}
	m, err := ch.OpenMessage()
	if err != nil {
		t.Fatal(err)
	}
	m.Write([]byte(`[1,`))
	m.Write([]byte(`2]`))
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`[1]`, `[1,2]`} {
		if _, b, err := c.Read(ctx); err != nil || string(b) != want {
			t.Fatalf("client read %q %v, want %s", b, err, want)
		}
	}
	recvErr := make(chan error, 1)
	go func() { _, err := ch.Recv(); recvErr <- err }() // reading answers the closing handshake
	c.Close(websocket.StatusNormalClosure, "")
	if err := <-recvErr; err != io.EOF {
		t.Fatalf("after the peer's close: %v, want io.EOF", err)
	}
}

// A binary frame closes the socket with 1003; a message over the limit
// gives TooLarge's error and closes it with 1009.
func TestChannelRefusals(t *testing.T) {
	cases := []struct {
		typ    websocket.MessageType
		msg    string
		status websocket.StatusCode
		check  func(error) bool
	}{
		{websocket.MessageBinary, "{}", websocket.StatusUnsupportedData, func(err error) bool { return err == ErrBinaryFrame }},
		{websocket.MessageText, strings.Repeat("x", 100), websocket.StatusMessageTooBig, func(err error) bool {
			var tl tooLarge
			return errors.As(err, &tl) && tl.limit == 64
		}},
	}
	for _, tc := range cases {
		ch, c := pair(t, 64)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.Write(ctx, tc.typ, []byte(tc.msg)); err != nil {
			t.Fatal(err)
		}
		readErr := make(chan error, 1)
		go func() { _, _, err := c.Read(ctx); readErr <- err }() // reading answers the closing handshake
		if _, err := ch.Recv(); !tc.check(err) {
			t.Fatalf("Recv: %v", err)
		}
		err := <-readErr
		cancel()
		if websocket.CloseStatus(err) != tc.status {
			t.Fatalf("the client saw %v, want status %d", err, tc.status)
		}
	}
}

// After Close, Send reports Closed.
func TestChannelClosed(t *testing.T) {
	ch, _ := pair(t, 64)
	go ch.Close() // the closing handshake waits for the peer, which does not read
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := ch.Send([]byte("{}")); err == errClosed {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("Send after Close: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The headers that served only the upgrade are not kept.
func TestConnectionHeader(t *testing.T) {
	h := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Key": {"k"},
		"Sec-Websocket-Protocol": {"jsonrpc"}, "Authorization": {"Bearer t"}}
	got := ConnectionHeader(h)
	if len(got) != 2 || got.Get("Authorization") != "Bearer t" || got.Get("Sec-Websocket-Protocol") != "jsonrpc" {
		t.Fatalf("kept %v", got)
	}
	if ConnectionHeader(http.Header{"Upgrade": {"websocket"}}) != nil {
		t.Fatal("an upgrade-only header set kept something")
	}
}
