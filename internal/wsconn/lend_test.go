package wsconn

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// A message whose start the check wants is lent, from its first byte, and
// may be larger than the limit; others are read whole under it; the
// next message is read once the lent one is discarded.
func TestLendingLendsAndLimits(t *testing.T) {
	ch, c := pair(t, 1024)
	l := ch
	l.SetLendCheck(func(head []byte) framing.Lend {
		switch {
		case len(head) < 2:
			return framing.LendUndecided
		case bytes.HasPrefix(head, []byte("L:")):
			return framing.LendYes
		}
		return framing.LendNo
	})
	ctx := context.Background()
	big := append([]byte("L:"), bytes.Repeat([]byte("x"), 10<<10)...)
	for _, m := range [][]byte{[]byte("whole"), big, []byte("L:again"), []byte("after")} {
		if err := c.Write(ctx, websocket.MessageText, m); err != nil {
			t.Fatal(err)
		}
	}
	if msg, err := l.Recv(); err != nil || string(msg) != "whole" {
		t.Fatalf("a message not lent: %q %v", msg, err)
	}
	if _, err := l.Recv(); !errors.Is(err, framing.ErrLent) {
		t.Fatalf("a message to lend: %v", err)
	}
	got, err := io.ReadAll(l.Lent())
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the lent message: %d bytes of %d, %v", len(got), len(big), err)
	}
	if err := l.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Recv(); !errors.Is(err, framing.ErrLent) {
		t.Fatalf("a second message to lend: %v", err)
	}
	if err := l.Discard(); err != nil { // not read at all: discarded whole
		t.Fatal(err)
	}
	if msg, err := l.Recv(); err != nil || string(msg) != "after" {
		t.Fatalf("the message after a discarded one: %q %v", msg, err)
	}
	if err := c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("y"), 2000)); err != nil {
		t.Fatal(err)
	}
	var tl tooLarge
	if _, err := l.Recv(); !errors.As(err, &tl) || tl.limit != 1024 {
		t.Fatalf("a message over the limit read whole: %v", err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("the peer of a message over the limit: %v, want close 1009", err)
	}
}

// A limit smaller than the first read (512 bytes) does not refuse a
// message that is to be lent: the check decides before the limit is
// applied. A message of the same size not lent is still refused.
func TestLendingSmallLimit(t *testing.T) {
	ch, c := pair(t, 100)
	l := ch
	l.SetLendCheck(func(head []byte) framing.Lend {
		if bytes.HasPrefix(head, []byte("L:")) {
			return framing.LendYes
		}
		return framing.LendNo
	})
	ctx := context.Background()
	lent := append([]byte("L:"), bytes.Repeat([]byte("x"), 300)...)
	if err := c.Write(ctx, websocket.MessageText, lent); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Recv(); !errors.Is(err, framing.ErrLent) {
		t.Fatalf("a 302-byte message to lend, limit 100: %v", err)
	}
	if got, err := io.ReadAll(l.Lent()); err != nil || !bytes.Equal(got, lent) {
		t.Fatalf("the lent message: %d bytes of %d, %v", len(got), len(lent), err)
	}
	if err := l.Discard(); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, websocket.MessageText, bytes.Repeat([]byte("y"), 300)); err != nil {
		t.Fatal(err)
	}
	var tl tooLarge
	if _, err := l.Recv(); !errors.As(err, &tl) || tl.limit != 100 {
		t.Fatalf("a 300-byte message not lent, limit 100: %v", err)
	}
}
