package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/coder/websocket"
)

// Raw is the limit of each transport, with no JSON at all: over TCP and
// pipes (stdio) a newline echo (the server echoes each line, flushing when
// its input runs dry; the client writes the bytes of the echo request and
// reads the reply line); over HTTP a net/http handler that echoes the body
// and an http.Client that posts it; over WebSocket a coder/websocket echo
// (one message read, one written) and a coder/websocket client. For idle connections, the TCP server is one
// goroutine per connection blocked in a 1-byte read (no buffers), the
// WebSocket server one goroutine blocked in Reader.
func Raw() *Impl {
	return &Impl{
		Name:        "raw",
		ServeTCP:    func(l net.Listener) func() { return rawServe(l, func(nc net.Conn) { rawEcho(nc) }) },
		ServeIdle:   func(l net.Listener) func() { return rawServe(l, rawIdleEcho) },
		DialTCP:     rawDial,
		HTTPHandler: func() (http.Handler, func()) { return http.HandlerFunc(rawHTTPEcho), func() {} },
		DialHTTP: func(ctx context.Context, url string, hc *http.Client, raw Params) (Client, error) {
			return &rawHTTPClient{url: url, hc: hc, msg: rawRequest(raw)}, nil
		},
		WSHandler: func() (http.Handler, func()) { return http.HandlerFunc(rawWSEcho), func() {} },
		DialWS:    rawWSDial,
		ServeStdio: func(rwc io.ReadWriteCloser) func() {
			done := make(chan struct{})
			go func() { defer close(done); rawEcho(rwc) }()
			return func() { rwc.Close(); <-done }
		},
		DialStdio: func(ctx context.Context, rwc io.ReadWriteCloser, raw Params) (Client, error) {
			return newRawStreamClient(rwc, raw), nil
		},
		Request: objectRequest,
	}
}

// rawRequest is the echo request for p as a JSON-RPC implementation would
// send it, built once.
func rawRequest(p Params) []byte {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": p})
	if err != nil {
		panic(err)
	}
	return b
}

func rawServe(l net.Listener, serve func(net.Conn)) func() {
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[nc] = true
			mu.Unlock()
			go func() {
				serve(nc)
				nc.Close()
				mu.Lock()
				delete(conns, nc)
				mu.Unlock()
			}()
		}
	}()
	return func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for nc := range conns {
			nc.Close()
		}
	}
}

// rawEcho echoes lines, flushing when no more input is buffered (so that
// pipelined requests leave in one write, as a good server would).
func rawEcho(rw io.ReadWriter) {
	r := bufio.NewReaderSize(rw, 64<<10)
	w := bufio.NewWriterSize(rw, 64<<10)
	var long []byte
	for {
		line, err := readLine(r, &long)
		if err != nil {
			return
		}
		w.Write(line)
		if r.Buffered() == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// rawIdleEcho holds no buffer while it waits: it blocks in a 1-byte read,
// then reads the rest of the line into a pooled buffer and echoes it.
func rawIdleEcho(nc net.Conn) {
	one := make([]byte, 1)
	for {
		if _, err := nc.Read(one); err != nil {
			return
		}
		bp := linePool.Get().(*[]byte)
		b := append((*bp)[:0], one[0])
		for b[len(b)-1] != '\n' {
			if len(b) == cap(b) {
				b = append(b, 0)[:len(b)]
			}
			n, err := nc.Read(b[len(b):cap(b)])
			if err != nil {
				return
			}
			b = b[:len(b)+n]
		}
		_, err := nc.Write(b)
		*bp = b[:0]
		linePool.Put(bp)
		if err != nil {
			return
		}
	}
}

// readLine returns the next line with its newline. A line longer than r's
// buffer is gathered in *long (reused).
func readLine(r *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for {
		line, err = r.ReadSlice('\n')
		*long = append(*long, line...)
		if err != bufio.ErrBufferFull {
			return *long, err
		}
	}
}

func rawDial(ctx context.Context, addr string, raw Params) (Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newRawStreamClient(nc, raw), nil
}

// newRawStreamClient is the raw client on a byte stream (TCP, pipes): it
// writes the request line and reads one line back.
func newRawStreamClient(rwc io.ReadWriteCloser, raw Params) *rawClient {
	msg := append(rawRequest(raw), '\n')
	r := bufio.NewReaderSize(rwc, 64<<10)
	var long []byte
	return &rawClient{
		send: func() error { _, err := rwc.Write(msg); return err },
		recv: func() (int, error) { line, err := readLine(r, &long); return len(line), err },
		want: len(msg), close: rwc.Close,
	}
}

// rawClient sends the request bytes and reads one reply, checking only its
// length. In its sequential mode the caller does both, in order; after
// Concurrent, callers send under a lock and a reader goroutine wakes them
// in order (the echo answers in order).
type rawClient struct {
	send  func() error        // writes the request
	recv  func() (int, error) // reads one reply, returns its length
	want  int                 // the length of a reply
	close func() error

	mu      sync.Mutex
	conc    bool
	waiters chan chan error
}

// Concurrent switches the client to its multiplexed mode.
func (c *rawClient) Concurrent() {
	c.conc = true
	c.waiters = make(chan chan error, 1024)
	go func() {
		for {
			_, err := c.recv()
			if err != nil {
				for {
					select {
					case w := <-c.waiters:
						w <- err
					default:
						return
					}
				}
			}
			(<-c.waiters) <- nil
		}
	}()
}

var waiterPool = sync.Pool{New: func() any { return make(chan error, 1) }}

func (c *rawClient) Echo(ctx context.Context, in, out *Params) error {
	if !c.conc {
		if err := c.send(); err != nil {
			return err
		}
		n, err := c.recv()
		if err != nil {
			return err
		}
		if n != c.want {
			return errors.New("bench: raw echo returned " + strconv.Itoa(n) + " bytes")
		}
		*out = *in
		return nil
	}
	w := waiterPool.Get().(chan error)
	c.mu.Lock()
	c.waiters <- w
	err := c.send()
	c.mu.Unlock()
	if err != nil {
		return err
	}
	err = <-w
	waiterPool.Put(w)
	*out = *in
	return err
}

func (c *rawClient) Batch(ctx context.Context, in, out []Params) error { return ErrUnsupported }

func (c *rawClient) Close() error { return c.close() }

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func rawHTTPEcho(w http.ResponseWriter, r *http.Request) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodyPool.Put(buf)
	if _, err := buf.ReadFrom(r.Body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header()["Content-Type"] = []string{"application/json"}
	w.Write(buf.Bytes())
}

type rawHTTPClient struct {
	url string
	hc  *http.Client
	msg []byte
}

func (c *rawHTTPClient) Echo(ctx context.Context, in, out *Params) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.msg))
	if err != nil {
		return err
	}
	req.Header["Content-Type"] = []string{"application/json"}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodyPool.Put(buf)
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || buf.Len() != len(c.msg) {
		return errors.New("bench: raw HTTP echo: " + resp.Status)
	}
	*out = *in
	return nil
}

func (c *rawHTTPClient) Batch(ctx context.Context, in, out []Params) error { return ErrUnsupported }

func (c *rawHTTPClient) Close() error { c.hc.CloseIdleConnections(); return nil }

// rawWSEcho echoes WebSocket messages with coder/websocket.
func rawWSEcho(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	for {
		typ, rd, err := c.Reader(ctx)
		if err != nil {
			return
		}
		buf := bodyPool.Get().(*bytes.Buffer)
		buf.Reset()
		_, err = io.Copy(buf, rd)
		if err == nil {
			err = c.Write(ctx, typ, buf.Bytes())
		}
		bodyPool.Put(buf)
		if err != nil {
			return
		}
	}
}

// rawWSDial is the raw WebSocket client: coder/websocket, one text message
// out, one message read back into a reused buffer.
func rawWSDial(ctx context.Context, url string, raw Params) (Client, error) {
	wc, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, err
	}
	wc.SetReadLimit(64 << 20)
	msg := rawRequest(raw)
	bg := context.Background()
	var buf bytes.Buffer
	return &rawClient{
		send: func() error { return wc.Write(bg, websocket.MessageText, msg) },
		recv: func() (int, error) {
			_, rd, err := wc.Reader(bg)
			if err != nil {
				return 0, err
			}
			buf.Reset()
			_, err = buf.ReadFrom(rd)
			return buf.Len(), err
		},
		want: len(msg), close: wc.CloseNow,
	}, nil
}
