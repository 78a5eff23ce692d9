package jsonrpc

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// A read interrupted at any byte of the input, within a header, a body, a
// line or an oversize line being skipped, loses nothing: the next Recv
// resumes and every message comes out whole.
func TestStreamInterruptAnywhere(t *testing.T) {
	const a, b = `{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`
	long := `{"x":"` + strings.Repeat("y", 80) + `"}`
	for _, tc := range []struct {
		name    string
		framing Framing
		input   string
		want    []string // messages, or "!" for a too-large error
	}{
		{"header", FramingHeader, "Content-Length: 30\r\nX-Other: 1\r\n\r\n" + a + "\r\nContent-Length: 30\r\n\r\n" + b, []string{a, b}},
		{"line", FramingLine, a + "\r\n\n" + b + "\n", []string{a, b}},
		{"skip", FramingLine, long + "\n" + b + "\n", []string{"!", b}},
	} {
		for cut := 1; cut < len(tc.input); cut++ {
			client, server := net.Pipe()
			s := NewStream(server, StreamOptions{Framing: tc.framing, MaxMessageSize: 40}).(*stream)
			go func() {
				// The pipe's Write returns once the reader took every byte, so
				// the reader needs the rest when its read is cut.
				client.Write([]byte(tc.input[:cut]))
				s.InterruptRecv()
				// Let the cut read return before more bytes can race it.
				for end := time.Now().Add(time.Second); s.interrupted.Load() && time.Now().Before(end); {
					time.Sleep(10 * time.Microsecond)
				}
				client.Write([]byte(tc.input[cut:]))
			}()
			var got []string
			interrupted := false
			for len(got) < len(tc.want) {
				msg, err := s.Recv()
				var fe *FrameError
				switch {
				case errors.Is(err, ErrRecvInterrupted):
					interrupted = true
				case errors.As(err, &fe) && !fe.Fatal:
					got = append(got, "!")
				case err != nil:
					t.Fatalf("%s, cut at %d: %v", tc.name, cut, err)
				default:
					got = append(got, string(msg))
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("%s, cut at %d: got %q, want %q", tc.name, cut, got, tc.want)
			}
			if !interrupted {
				t.Errorf("%s, cut at %d: the read was not interrupted", tc.name, cut)
			}
			client.Close()
			server.Close()
		}
	}
}
