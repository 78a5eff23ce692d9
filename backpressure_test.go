package jsonrpc

import (
	"bufio"
	"context"
	"net"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// liveHeap is the live heap after a collection: the least of a few
// samples (a second cycle also empties the sync.Pool victim caches), so
// that garbage other goroutines make between them does not count.
func liveHeap() uint64 {
	least := ^uint64(0)
	for range 4 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		least = min(least, ms.HeapAlloc)
	}
	return least
}

// rawPeer is a client connection that writes and reads messages by hand.
type rawPeer interface {
	write(msg string) error
	read() (string, error)
	close()
}

type lineConn struct {
	nc net.Conn
	br *bufio.Reader
}

func (l *lineConn) write(msg string) error { _, err := l.nc.Write([]byte(msg + "\n")); return err }
func (l *lineConn) read() (string, error) {
	l.nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	s, err := l.br.ReadString('\n')
	return strings.TrimSuffix(s, "\n"), err
}
func (l *lineConn) close() { l.nc.Close() }

type wsPeer struct{ wc *websocket.Conn }

func (w *wsPeer) write(msg string) error {
	return w.wc.Write(context.Background(), websocket.MessageText, []byte(msg))
}
func (w *wsPeer) read() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, b, err := w.wc.Read(ctx)
	return string(b), err
}
func (w *wsPeer) close() { w.wc.CloseNow() }

// A client that sends many requests for large results and then stops
// reading must not make the server buffer them: once the unwritten replies
// pass MaxQueuedBytes the connection stops taking requests, so the heap
// grows by about MaxConcurrency replies, not by all of them; when the client
// reads again it gets every reply. Over tcp, unix and WebSocket (stdio:
// TestStdioSlowParentGetsEveryReply).
func TestSlowReaderBackPressure(t *testing.T) {
	const (
		result      = 1 << 20
		concurrency = 4
		conns       = 2
	)
	calls := 200 // the figure: 200 MiB of replies per connection
	if RaceEnabled {
		calls = 24 // still far more than the bound lets through
	}
	for _, scheme := range []string{"tcp", "unix", "ws"} {
		t.Run(scheme, func(t *testing.T) {
			srv := &Server{Handler: bigMux(), MaxConcurrency: concurrency, Logger: quietLogger}
			url := scheme + "://127.0.0.1:0"
			if scheme == "unix" {
				url = "unix://" + filepath.Join(t.TempDir(), "s.sock")
			}
			l, err := srv.Listen(url)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown(context.Background())
			dial := func() rawPeer {
				if scheme == "ws" {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					wc, _, err := websocket.Dial(ctx, l.URL, nil)
					if err != nil {
						t.Fatal(err)
					}
					wc.SetReadLimit(2 * result)
					return &wsPeer{wc}
				}
				network, addr, _ := strings.Cut(l.URL, "://")
				nc, err := net.Dial(network, addr)
				if err != nil {
					t.Fatal(err)
				}
				return &lineConn{nc, bufio.NewReaderSize(nc, 64<<10)}
			}

			before := liveHeap()
			var peers []rawPeer
			for range conns {
				p := dial()
				defer p.close()
				peers = append(peers, p)
				go func() { // the server may stop reading before all are written
					for i := range calls {
						if p.write(req("big", "["+strconv.Itoa(result)+"]", strconv.Itoa(i))) != nil {
							return
						}
					}
				}()
			}
			// Let the server serve what it will while nobody reads.
			var taken int64
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); { // generous: under -race on a loaded machine 100 replies of 256 KiB took over 10 s
				time.Sleep(500 * time.Millisecond)
				n := srv.takenAll()
				if n == taken && n > 0 {
					break
				}
				taken = n
			}
			growth := int64(liveHeap()) - int64(before)
			perConn := growth / conns
			t.Logf("stalled: %d requests taken on %d connections; heap growth %.1f MiB, %.1f MiB per connection (results of %d KiB, MaxConcurrency %d, MaxQueuedBytes %d KiB)",
				taken, conns, float64(growth)/(1<<20), float64(perConn)/(1<<20), result>>10, concurrency, DefaultMaxQueuedBytes>>10)
			// Each connection holds at most MaxConcurrency replies being
			// written plus the queued bound: each reply in its handler's
			// buffer and in the stream's write queue, which grows by
			// doubling while a round is being written (up to three copies'
			// worth), and a margin for the read buffers.
			if bound := int64(3*(concurrency+1)*result + DefaultMaxQueuedBytes + 4<<20); perConn > bound {
				t.Fatalf("heap grew by %d bytes per connection, bound %d", perConn, bound)
			}
			if taken >= int64(conns*calls) {
				t.Fatalf("the server took all %d requests while nobody read", taken)
			}
			// The client reads again: every reply arrives, in full.
			want := strings.Repeat("x", result) + `"}`
			var wg sync.WaitGroup
			for _, p := range peers {
				wg.Go(func() {
					seen := make(map[string]bool)
					for range calls {
						msg, err := p.read()
						if err != nil {
							t.Errorf("after %d replies: %v", len(seen), err)
							return
						}
						head, body, ok := strings.Cut(msg, `,"result":"`)
						id, found := strings.CutPrefix(head, `{"jsonrpc":"2.0","id":`)
						if !ok || !found || body != want {
							t.Errorf("bad reply (%d bytes): %.80q", len(msg), msg)
							return
						}
						seen[id] = true
					}
					if len(seen) != calls {
						t.Errorf("%d distinct replies, want %d", len(seen), calls)
					}
				})
			}
			wg.Wait()
		})
	}
}

// takenAll sums the messages taken on the connections s serves.
func (s *Server) takenAll() int64 {
	var n int64
	for _, c := range s.life.Conns() {
		n += c.taken.Load()
	}
	return n
}

// Server.MaxQueuedBytes sets the bound: with room for every reply the
// server takes all the requests of a client that does not read; with a
// small bound it stops once the socket buffers are full.
func TestMaxQueuedBytesOption(t *testing.T) {
	const calls, result = 100, 256 << 10
	for _, tc := range []struct {
		bound   int64
		atLeast int64 // requests taken
		atMost  int64
	}{
		{bound: 64 << 10, atLeast: 1, atMost: 70}, // the rest sits in socket buffers
		{bound: 64 << 20, atLeast: calls, atMost: calls},
	} {
		srv := &Server{Handler: bigMux(), MaxConcurrency: 1, MaxQueuedBytes: tc.bound, Logger: quietLogger}
		addr := hostileServer(t, srv, FramingLine)
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		go func() {
			for i := range calls {
				if _, err := nc.Write([]byte(req("big", "["+strconv.Itoa(result)+"]", strconv.Itoa(i)) + "\n")); err != nil {
					return
				}
			}
		}()
		var taken int64
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); { // generous: under -race on a loaded machine 100 replies of 256 KiB took over 10 s
			time.Sleep(300 * time.Millisecond)
			n := srv.takenAll()
			if n == taken && n >= tc.atLeast {
				break
			}
			taken = n
		}
		if taken < tc.atLeast || taken > tc.atMost {
			t.Errorf("MaxQueuedBytes %d: %d requests taken while the client did not read, want %d..%d", tc.bound, taken, tc.atLeast, tc.atMost)
		}
		nc.Close()
	}
}

// The write timeout bounds a stall, not a slow transfer: a peer that reads
// a large reply slowly but steadily, slower than a chunk per timeout, gets
// all of it. (net.Pipe: a write goes through as the reader reads, and a
// deadline reports how much went through, with no TCP window effects.)
func TestWriteTimeoutCountsProgress(t *testing.T) {
	sc, cc := net.Pipe()
	defer cc.Close()
	conn := NewConn(NewStream(sc, StreamOptions{}), &Server{Handler: bigMux(), WriteTimeout: 500 * time.Millisecond, Logger: quietLogger})
	defer conn.Close()
	const size = 128 << 10
	go cc.Write([]byte(req("big", "["+strconv.Itoa(size)+"]", "1") + "\n"))
	var got int
	buf := make([]byte, 4<<10)
	start := time.Now()
	for got < size {
		// About 80 KiB/s: a 64 KiB chunk takes longer than the timeout,
		// while bytes go through ten times within it.
		time.Sleep(50 * time.Millisecond)
		cc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := cc.Read(buf)
		if err != nil {
			t.Fatalf("after %d bytes (%v): %v; the connection: %v", got, time.Since(start), err, conn.Err())
		}
		got += n
	}
}
