package framing

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// lendPrefixed lends a message that begins with "L".
func lendPrefixed(head []byte) Lend {
	switch {
	case len(head) == 0:
		return LendUndecided
	case head[0] == 'L':
		return LendYes
	}
	return LendNo
}

func frameHeader(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// feed writes input to a stream on one end of a pipe, in pieces of cut
// bytes (the stream then meets heads and bodies cut anywhere), and closes
// it after.
func feed(t *testing.T, f Framing, max int64, input string, cut int) *Stream {
	t.Helper()
	client, server := net.Pipe()
	s := New(server, f, max, 30*time.Second)
	s.SetLendCheck(lendPrefixed)
	go func() {
		for i := 0; i < len(input); i += cut {
			if _, err := client.Write([]byte(input[i:min(i+cut, len(input))])); err != nil {
				return
			}
		}
		client.Close()
	}()
	t.Cleanup(func() { server.Close() })
	return s
}

// With Content-Length framing a body is lent for exactly its length,
// however the input is cut; the message after it is read whole, and a
// lent body discarded unread, or half read, leaves the next one intact. A body over the limit not lent
// fails the stream.
func TestLendHeaderBody(t *testing.T) {
	big := "L" + strings.Repeat("x", 5000)
	input := frameHeader("small") + frameHeader(big) + frameHeader("Lshort") + frameHeader(big) + frameHeader("after") + frameHeader(strings.Repeat("y", 200))
	for _, cut := range []int{1, 7, 100, 4096, len(input)} {
		s := feed(t, Header, 100, input, cut)
		if msg, err := s.Recv(); err != nil || string(msg) != "small" {
			t.Fatalf("cut %d: a message not lent: %q %v", cut, msg, err)
		}
		if _, err := s.Recv(); err != ErrLent {
			t.Fatalf("cut %d: a body over the limit to lend: %v", cut, err)
		}
		if got, err := io.ReadAll(s.Lent()); err != nil || string(got) != big {
			t.Fatalf("cut %d: the lent body: %d bytes of %d, %v", cut, len(got), len(big), err)
		}
		// A body under the limit is lent when it is not whole in the
		// buffer, read whole when it is (as a line).
		switch msg, err := s.Recv(); {
		case err == ErrLent:
			if err := s.Discard(); err != nil { // unread
				t.Fatal(err)
			}
		case err != nil || string(msg) != "Lshort":
			t.Fatalf("cut %d: a short body: %q %v", cut, msg, err)
		}
		if _, err := s.Recv(); err != ErrLent {
			t.Fatalf("cut %d: the second large body: %v", cut, err)
		}
		if _, err := io.ReadFull(s.Lent(), make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		if err := s.Discard(); err != nil { // half read
			t.Fatal(err)
		}
		if msg, err := s.Recv(); err != nil || string(msg) != "after" {
			t.Fatalf("cut %d: the message after: %q %v", cut, msg, err)
		}
		var fe *Error
		if _, err := s.Recv(); !errors.As(err, &fe) || !fe.Fatal || fe.Size != 200 {
			t.Fatalf("cut %d: a body over the limit, not lent: %v", cut, err)
		}
	}
}

// A lent body the input ends in the middle of is io.ErrUnexpectedEOF to
// its reader (and to Discard's caller, nothing: the stream is at its end).
func TestLendHeaderBodyCutShort(t *testing.T) {
	s := feed(t, Header, 100, "Content-Length: 500\r\n\r\nL"+strings.Repeat("x", 300), 64)
	if _, err := s.Recv(); err != ErrLent {
		t.Fatalf("a body to lend: %v", err)
	}
	got, err := io.ReadAll(s.Lent())
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 301 {
		t.Fatalf("a body cut short: %d bytes, %v", len(got), err)
	}
	if _, err := s.Recv(); err != io.EOF {
		t.Fatalf("after: %v", err)
	}
}

// With newline framing a line over the limit that is to be lent is lent
// even when it is whole in the first read (the check comes before the
// limit); one not lent is refused.
func TestLendLineOverLimitInOneRead(t *testing.T) {
	lent := "L" + strings.Repeat("x", 300)
	s := feed(t, Line, 100, lent+"\n"+strings.Repeat("y", 300)+"\nafter\n", 4096)
	if _, err := s.Recv(); err != ErrLent {
		t.Fatalf("a line to lend: %v", err)
	}
	if got, err := io.ReadAll(s.Lent()); err != nil || !bytes.Equal(got, []byte(lent)) {
		t.Fatalf("the lent line: %q %v", got, err)
	}
	var fe *Error
	if _, err := s.Recv(); !errors.As(err, &fe) || fe.Fatal {
		t.Fatalf("a line over the limit, not lent: %v", err)
	}
	if msg, err := s.Recv(); err != nil || string(msg) != "after" {
		t.Fatalf("the line after: %q %v", msg, err)
	}
}

// chunked is input read in pieces of n bytes; writes are dropped.
type chunked struct {
	data []byte
	n    int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}
func (c *chunked) Write(p []byte) (int, error) { return len(p), nil }
func (c *chunked) Close() error                { return nil }

// recvAll reads the messages of a stream until an error (at most 64):
// lent ones read through Lent, whole, or (half) their first 8 bytes and
// then discarded.
func recvAll(s *Stream, half bool) (msgs []string, lent []bool, last error) {
	for range 64 {
		msg, err := s.Recv()
		if err == ErrLent {
			r := s.Lent()
			if half {
				r = io.LimitReader(r, 8) // the rest discarded
			}
			b, rerr := io.ReadAll(r)
			if derr := s.Discard(); rerr == nil {
				rerr = derr
			}
			if rerr != nil {
				return msgs, lent, rerr
			}
			msgs, lent = append(msgs, string(b)), append(lent, true)
			continue
		}
		if err != nil {
			return msgs, lent, err
		}
		msgs, lent = append(msgs, string(msg)), append(lent, false)
	}
	return msgs, lent, nil
}

// FuzzLendHeader reads any input with Content-Length framing, cut in
// reads of any size, lending the bodies that begin with "L" under a small
// limit: it never panics, and the messages it yields, whole or lent, are
// those a stream with no lending and no limit reads, in order, until it
// stops; it stops early only at a body over the limit that is not lent.
func FuzzLendHeader(f *testing.F) {
	f.Add([]byte(frameHeader("small")+frameHeader("L"+strings.Repeat("x", 100))+frameHeader("after")), uint8(7), false)
	f.Add([]byte("Content-Length: 500\r\n\r\nL"+strings.Repeat("x", 30)), uint8(3), true)
	f.Add([]byte(frameHeader(strings.Repeat("y", 80))+frameHeader("L")), uint8(64), false)
	f.Add([]byte("Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc"), uint8(1), false)
	f.Fuzz(func(t *testing.T, input []byte, cut uint8, half bool) {
		n := int(cut%64) + 1
		ref := New(&chunked{input, n}, Header, 1<<20, 0)
		want, _, werr := recvAll(ref, false)
		s := New(&chunked{input, n}, Header, 16, 0)
		s.SetLendCheck(lendPrefixed)
		got, lent, err := recvAll(s, half)
		if len(got) > len(want) {
			t.Fatalf("%d messages, the reference %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] && !(half && lent[i] && strings.HasPrefix(want[i], got[i])) {
				t.Fatalf("message %d: %q, the reference %q", i, got[i], want[i])
			}
		}
		if len(got) < len(want) {
			var fe *Error
			next := want[len(got)]
			if !errors.As(err, &fe) || fe.Limit != 16 || len(next) <= 16 || next[0] == 'L' {
				t.Fatalf("stopped after %d messages with %v; the next is %q", len(got), err, next)
			}
		} else if (err == nil) != (werr == nil) {
			t.Fatalf("ended with %v, the reference with %v", err, werr)
		}
	})
}
