package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc"
)

// A Target is a server under test. Dial opens a new connection to it; the
// suite dials once at the start and again after a connection was lost.
type Target interface {
	Dial(ctx context.Context) (Conn, error)
	String() string
}

// A Conn exchanges raw messages with the server: what Send is given goes
// out byte for byte (framed on a stream), and Recv returns what the server
// sent, unparsed. The suite calls Send and Recv from one goroutine at a time.
type Conn interface {
	// Send sends msg as one message.
	Send(ctx context.Context, msg []byte) error
	// Recv returns the next message from the server. On a transport that
	// carries one reply per message sent (HTTP, NATS request/reply) it
	// returns ErrNoReply at once when the message sent got no reply; on a
	// stream it waits until a message comes or ctx is done.
	Recv(ctx context.Context) ([]byte, error)
	Close() error
}

// ErrNoReply is returned by Conn.Recv when the transport knows that the
// message sent got no reply (an HTTP response without a body).
var ErrNoReply = errors.New("conformance: no reply to the message sent")

// ErrServerExited is wrapped by the errors of a CommandTarget's Conn once
// the server process has exited.
var ErrServerExited = errors.New("the server process exited")

// HTTPConn is implemented by the Conns of HTTP targets: the status line and
// headers of the response to the last message sent.
type HTTPConn interface {
	Conn
	LastResponse() (status int, header http.Header)
}

// RawConn is implemented by the Conns of byte streams (TCP, unix sockets,
// stdio): WriteRaw writes b as it is, without framing. Send and WriteRaw
// may be called while Recv waits on another goroutine.
type RawConn interface {
	Conn
	WriteRaw(b []byte) error
}

// HTTPTarget is a server that takes each message as the body of an HTTP
// POST and answers in the response body.
type HTTPTarget struct {
	URL    string
	Client *http.Client // nil: a client of its own
	Header http.Header  // added to every request
}

func (t *HTTPTarget) String() string { return t.URL }

// Dial returns a Conn that POSTs each message; no request is made yet.
func (t *HTTPTarget) Dial(ctx context.Context) (Conn, error) {
	c := t.Client
	if c == nil {
		c = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	return &httpConn{t: t, client: c}, nil
}

type httpConn struct {
	t       *HTTPTarget
	client  *http.Client
	body    []byte
	replied bool
	status  int
	header  http.Header
}

func (h *httpConn) Send(ctx context.Context, msg []byte) error {
	h.body, h.replied, h.status, h.header = nil, false, 0, nil
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.t.URL, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	for k, vs := range h.t.Header {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, jsonrpc.DefaultMaxMessageSize+1))
	if err != nil {
		return fmt.Errorf("reading the response body: %w", err)
	}
	h.status, h.header = resp.StatusCode, resp.Header
	if len(bytes.TrimSpace(body)) > 0 {
		h.body, h.replied = body, true
	}
	return nil
}

func (h *httpConn) Recv(ctx context.Context) ([]byte, error) {
	if !h.replied {
		return nil, ErrNoReply
	}
	h.replied = false
	return h.body, nil
}

func (h *httpConn) LastResponse() (int, http.Header) { return h.status, h.header }

func (h *httpConn) Close() error { h.client.CloseIdleConnections(); return nil }

// WebSocketTarget is a server that takes each message as a WebSocket text
// frame.
type WebSocketTarget struct {
	URL    string
	Client *http.Client // for the handshake; nil: http.DefaultClient
	Header http.Header  // added to the handshake
}

func (t *WebSocketTarget) String() string { return t.URL }

// Dial opens the WebSocket.
func (t *WebSocketTarget) Dial(ctx context.Context) (Conn, error) {
	c, _, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{HTTPClient: t.Client, HTTPHeader: t.Header})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(jsonrpc.DefaultMaxMessageSize)
	read := func() ([]byte, error) {
		_, b, err := c.Read(context.Background())
		return b, err
	}
	return &wsConn{c: c, pump: newPump(read, func() error { return c.Close(websocket.StatusNormalClosure, "") })}, nil
}

type wsConn struct {
	*pump
	c *websocket.Conn
}

func (w *wsConn) Send(ctx context.Context, msg []byte) error {
	return w.c.Write(ctx, websocket.MessageText, msg)
}

// StreamTarget is a server on a byte stream (TCP, TLS, a unix socket, a
// pipe): each Dial opens a new stream.
type StreamTarget struct {
	Name    string // how reports name the target, e.g. tcp://127.0.0.1:9090
	Open    func(ctx context.Context) (io.ReadWriteCloser, error)
	Framing jsonrpc.Framing // FramingLine (newline-delimited) or FramingHeader (Content-Length)
}

func (t *StreamTarget) String() string { return t.Name }

// Dial opens a stream with Open.
func (t *StreamTarget) Dial(ctx context.Context) (Conn, error) {
	rwc, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	return newStreamConn(rwc, t.Framing, nil), nil
}

// CommandTarget is a server spawned as a subprocess and spoken to over its
// stdin and stdout. Each Dial starts the command anew.
type CommandTarget struct {
	Path    string
	Args    []string
	Framing jsonrpc.Framing
	Stderr  io.Writer // the server's stderr; nil: kept only to report why it exited
}

func (t *CommandTarget) String() string {
	return "command '" + strings.Join(append([]string{t.Path}, t.Args...), " ") + "'"
}

// Dial starts the command.
func (t *CommandTarget) Dial(ctx context.Context) (Conn, error) {
	cmd := exec.Command(t.Path, t.Args...)
	tail := &tailBuffer{}
	cmd.Stderr = tail
	if t.Stderr != nil {
		cmd.Stderr = io.MultiWriter(t.Stderr, tail)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, stdin: stdin, tail: tail, done: make(chan struct{})}
	return newStreamConn(&pipe{stdout, stdin, p}, t.Framing, p.exited), nil
}

// process is a running CommandTarget.
type process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	tail  *tailBuffer
	once  sync.Once
	done  chan struct{}
	err   error
}

// wait reaps the process, killing it if it has not exited within grace.
func (p *process) wait(grace time.Duration) {
	p.once.Do(func() {
		go func() {
			select {
			case <-p.done:
			case <-time.After(grace):
				p.cmd.Process.Kill()
			}
		}()
		p.err = p.cmd.Wait()
		close(p.done)
	})
	<-p.done
}

// exited turns the end of the server's stdout into ErrServerExited with
// the exit status and the last lines of its stderr.
func (p *process) exited(readErr error) error {
	p.wait(2 * time.Second)
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error()
	}
	msg := fmt.Sprintf("%v (%s)", ErrServerExited, status)
	if t := p.tail.String(); t != "" {
		msg += "; its stderr ended: " + t
	}
	return fmt.Errorf("%s: %w", msg, errors.Join(ErrServerExited, readErr))
}

type pipe struct {
	r io.Reader
	w io.WriteCloser
	p *process
}

func (p *pipe) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipe) Close() error {
	err := p.w.Close()
	p.p.wait(2 * time.Second)
	return err
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 512 {
		t.b = t.b[len(t.b)-512:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// newStreamConn frames messages on rwc: Send writes the frame itself, and
// a goroutine reads framed messages with the library's stream reader
// (which only cuts the bytes into messages; nothing here parses them).
// onEOF, when set, turns the end of the stream into the error Recv reports.
func newStreamConn(rwc io.ReadWriteCloser, f jsonrpc.Framing, onEOF func(error) error) *streamConn {
	ch := jsonrpc.NewStream(rwc, jsonrpc.StreamOptions{Framing: f})
	read := func() ([]byte, error) {
		b, err := ch.Recv()
		if err != nil && onEOF != nil && !isFrameError(err) {
			err = onEOF(err)
		}
		return bytes.Clone(b), err
	}
	s := &streamConn{rwc: rwc, framing: f}
	s.pump = newPump(read, rwc.Close)
	return s
}

func isFrameError(err error) bool {
	var fe *jsonrpc.FrameError
	return errors.As(err, &fe)
}

type streamConn struct {
	*pump
	rwc     io.ReadWriteCloser
	framing jsonrpc.Framing
	wmu     sync.Mutex
}

func (s *streamConn) Send(ctx context.Context, msg []byte) error {
	var frame []byte
	if s.framing == jsonrpc.FramingHeader {
		frame = append(strconv.AppendInt([]byte("Content-Length: "), int64(len(msg)), 10), "\r\n\r\n"...)
		frame = append(frame, msg...)
	} else {
		frame = append(bytes.Clone(msg), '\n')
	}
	return s.WriteRaw(frame)
}

func (s *streamConn) WriteRaw(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if nc, ok := s.rwc.(net.Conn); ok {
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	}
	_, err := s.rwc.Write(b)
	return err
}

// pump reads messages in a goroutine of its own so that Recv can stop
// waiting when its context is done without closing the connection.
type pump struct {
	msgs    chan []byte
	err     error         // set before done is closed
	done    chan struct{} // closed when the reading goroutine returns
	stopped chan struct{} // closed by Close
	close   func() error
	closed  sync.Once
}

func newPump(read func() ([]byte, error), closeFn func() error) *pump {
	p := &pump{msgs: make(chan []byte), done: make(chan struct{}), stopped: make(chan struct{}), close: closeFn}
	go func() {
		defer close(p.done)
		for {
			b, err := read()
			if err != nil {
				p.err = err
				return
			}
			select {
			case p.msgs <- b:
			case <-p.stopped:
				return
			}
		}
	}()
	return p
}

func (p *pump) Recv(ctx context.Context) ([]byte, error) {
	select {
	case b := <-p.msgs:
		return b, nil
	case <-p.done:
		select {
		case b := <-p.msgs:
			return b, nil
		default:
		}
		return nil, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *pump) Close() error {
	var err error
	p.closed.Do(func() { close(p.stopped); err = p.close() })
	<-p.done
	return err
}

// URL returns the Target of a URL: http(s)://, ws(s)://, tcp://host:port,
// tls://host:port or unix:///path. Streams use framing; tlsConfig (nil:
// the defaults) applies to https, wss and tls.
func URL(rawURL string, framing jsonrpc.Framing, tlsConfig *tls.Config) (Target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyFromEnvironment}}
	switch u.Scheme {
	case "http", "https":
		return &HTTPTarget{URL: rawURL, Client: client}, nil
	case "ws", "wss":
		return &WebSocketTarget{URL: rawURL, Client: client}, nil
	case "tcp", "tls", "unix":
	default:
		return nil, fmt.Errorf("conformance: unsupported URL scheme %q", u.Scheme)
	}
	network, addr := "tcp", u.Host
	if u.Scheme == "unix" {
		network, addr = "unix", u.Opaque
		if addr == "" {
			addr = u.Host + u.Path
		}
	}
	dial := func(ctx context.Context) (io.ReadWriteCloser, error) {
		if u.Scheme == "tls" {
			d := tls.Dialer{Config: tlsConfig}
			return d.DialContext(ctx, network, addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &StreamTarget{Name: rawURL, Open: dial, Framing: framing}, nil
}
