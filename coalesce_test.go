package jsonrpc_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// serveCounting serves srv on the server end of a loopback TCP pair,
// counting its writes, and returns the client end.
func serveCounting(t *testing.T, srv *jsonrpc.Server, framing jsonrpc.Framing) (net.Conn, *atomic.Int64) {
	t.Helper()
	client, server := loopbackPair(t)
	writes := new(atomic.Int64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeConn(ctx, jsonrpc.NewStream(countingConn{server, writes}, jsonrpc.StreamOptions{Framing: framing}))
	}()
	t.Cleanup(func() { cancel(); <-done })
	return client, writes
}

// Requests that arrive together (a peer pipelining them) are answered in a
// few writes, as a server that writes when its input runs dry, not one
// write per reply; every reply is there, on both framings.
func TestPipelinedRepliesLeaveTogether(t *testing.T) {
	const n = 200
	for _, framing := range []jsonrpc.Framing{jsonrpc.FramingLine, jsonrpc.FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			mux := jsonrpc.NewMux()
			jsonrpc.Register(mux, "echo", func(_ context.Context, p []int) ([]int, error) { return p, nil })
			client, writes := serveCounting(t, &jsonrpc.Server{Handler: mux}, framing)
			var msgs strings.Builder
			for i := range n {
				msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"echo","params":[%d]}`, i, i)
				if framing == jsonrpc.FramingHeader {
					fmt.Fprintf(&msgs, "Content-Length: %d\r\n\r\n", len(msg))
				}
				msgs.WriteString(msg + "\n")
			}
			// Each pass sends the requests in one write and reads every reply;
			// the best pass counts (a loaded machine may preempt a handler,
			// which then takes the slow path).
			br := bufio.NewReader(client)
			client.SetDeadline(time.Now().Add(20 * time.Second))
			best := int64(n)
			for range 8 {
				before := writes.Load()
				if _, err := client.Write([]byte(msgs.String())); err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for len(seen) < n {
					reply, err := readFrame(br, framing)
					if err != nil {
						t.Fatalf("after %d replies: %v", len(seen), err)
					}
					seen[reply] = true
				}
				best = min(best, writes.Load()-before)
			}
			// About one write per read of the input: a read holds many
			// requests (before, most replies were a write of their own).
			t.Logf("%d replies took %d writes at best", n, best)
			if best > n/4 {
				t.Errorf("%d replies took %d writes at best", n, best)
			}
		})
	}
}

// A slow request does not hold back the replies of quick ones read with
// it: they leave while it still runs.
func TestPipelinedSlowRequestDoesNotHoldOthers(t *testing.T) {
	release := make(chan struct{})
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "fast", func(context.Context, struct{}) (int, error) { return 1, nil })
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (int, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return 2, nil
	})
	client, _ := serveCounting(t, &jsonrpc.Server{Handler: mux}, jsonrpc.FramingLine)
	client.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(client)
	// Warm up: quick requests, so that the next ones are served in turn.
	for range 3 {
		client.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"fast"}` + "\n"))
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	_, err := client.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"fast"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"slow"}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"fast"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for range 2 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got[strings.TrimSpace(line)] = true
	}
	if !got[`{"jsonrpc":"2.0","id":1,"result":1}`] || !got[`{"jsonrpc":"2.0","id":3,"result":1}`] {
		t.Fatalf("got %v while the slow request runs, want the replies to 1 and 3", got)
	}
	close(release)
	if line, err := br.ReadString('\n'); err != nil || strings.TrimSpace(line) != `{"jsonrpc":"2.0","id":2,"result":2}` {
		t.Fatalf("slow: %q %v", line, err)
	}
}

// readFrame reads one message of the framing from br.
func readFrame(br *bufio.Reader, framing jsonrpc.Framing) (string, error) {
	if framing == jsonrpc.FramingLine {
		line, err := br.ReadString('\n')
		return strings.TrimSpace(line), err
	}
	return readHeaderFramed(br)
}
