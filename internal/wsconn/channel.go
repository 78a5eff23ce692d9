package wsconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/resultstream"
)

// Options configure a Channel.
type Options struct {
	Limit        int64         // the read limit: bytes in one message
	PingInterval time.Duration // how often to ping the peer (<= 0: never)
	PingTimeout  time.Duration // how long a pong may take before the socket is dropped
	// Closed is the error of Recv and Send once the socket is closed.
	Closed error
	// TooLarge is the error of Recv for a message over Limit (the socket
	// is then closed with status 1009).
	TooLarge func(limit int64) error
}

// Channel carries one JSON-RPC message per text frame over a WebSocket.
// Writes are safe for concurrent use (the library serialises frames);
// Recv runs on one goroutine. A message whose start the check
// (SetLendCheck) wants lent is not read whole but handed to its reader
// (Lent) from where it is, as internal/framing's stream lends a line.
type Channel struct {
	wc      *websocket.Conn
	opts    Options
	once    sync.Once
	pingErr atomic.Pointer[error] // why a ping closed the socket
	tooBig  atomic.Bool           // a message was over Limit: nothing more is sent, Close says 1009
	check   framing.LendCheck
	lent    io.Reader // the message lent: its head, then the rest

	// Pings run on a timer, not on a goroutine of their own: an idle
	// socket costs no goroutine between pings.
	mu      sync.Mutex
	closed  bool
	timer   *time.Timer
	pinging sync.WaitGroup // a ping in progress
}

// New reads messages of up to o.Limit bytes from wc and pings its peer.
// Since a lent message may be larger than Limit, the socket's own limit is
// off: Recv applies Limit to the messages it reads whole, closing the
// socket with 1009 (Options.TooLarge's error) as the socket would.
func New(wc *websocket.Conn, o Options) *Channel {
	wc.SetReadLimit(-1)
	ch := &Channel{wc: wc, opts: o}
	if o.PingInterval > 0 {
		ch.timer = time.AfterFunc(o.PingInterval, ch.ping)
	}
	return ch
}

// ping pings the peer and schedules the next ping; when a pong does not
// come back in time, it records why and drops the socket, which ends Recv.
func (ch *Channel) ping() {
	ch.mu.Lock()
	if ch.closed {
		ch.mu.Unlock()
		return
	}
	ch.pinging.Add(1)
	ch.mu.Unlock()
	defer ch.pinging.Done()
	ctx, cancel := context.WithTimeout(context.Background(), ch.opts.PingTimeout)
	err := ch.wc.Ping(ctx)
	cancel()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.closed {
		return // closing anyway
	}
	if err != nil {
		// The ping's own context ran out: said in words, not wrapped, so
		// that a call failed by the drop does not match
		// context.DeadlineExceeded as if its caller's context had ended.
		perr := fmt.Errorf("jsonrpc: websocket peer did not answer a ping within %s: %v", ch.opts.PingTimeout, err)
		ch.pingErr.Store(&perr)
		ch.wc.CloseNow()
		return
	}
	ch.timer.Reset(ch.opts.PingInterval)
}

// ErrBinaryFrame ends a connection whose peer sent a binary frame.
var ErrBinaryFrame = errors.New("jsonrpc: the peer sent a binary WebSocket frame; JSON-RPC messages go in text frames")

// readError is the error of a failed read: why a ping dropped the socket,
// io.EOF for a peer's normal close, Options.Closed.
func (ch *Channel) readError(err error) error {
	if p := ch.pingErr.Load(); p != nil {
		return *p
	}
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
		return io.EOF
	}
	if errors.Is(err, net.ErrClosed) {
		return ch.opts.Closed
	}
	return fmt.Errorf("jsonrpc: websocket: %w", err)
}

// Send writes msg as one text frame.
func (ch *Channel) Send(msg []byte) error {
	if ch.tooBig.Load() {
		return ch.opts.Closed
	}
	if err := ch.wc.Write(context.Background(), websocket.MessageText, msg); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return ch.opts.Closed
		}
		return fmt.Errorf("jsonrpc: websocket write: %w", err)
	}
	return nil
}

// Close performs the closing handshake (status 1000, or 1009 after a
// message over Limit) and stops the pinger.
func (ch *Channel) Close() error {
	ch.once.Do(func() {
		ch.mu.Lock()
		ch.closed = true
		if ch.timer != nil {
			ch.timer.Stop()
		}
		ch.mu.Unlock()
		if ch.tooBig.Load() {
			ch.wc.Close(websocket.StatusMessageTooBig, "read limited at "+strconv.FormatInt(ch.opts.Limit, 10)+" bytes")
		} else {
			ch.wc.Close(websocket.StatusNormalClosure, "")
		}
		ch.pinging.Wait()
	})
	return nil
}

// OpenMessage starts one text message written in frames.
func (ch *Channel) OpenMessage() (resultstream.Writer, error) {
	w, err := ch.wc.Writer(context.Background(), websocket.MessageText)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: websocket write: %w", err)
	}
	return &Message{ch: ch, w: w}, nil
}

// Message is a WebSocket message written in frames.
type Message struct {
	ch *Channel
	w  io.WriteCloser
}

// Write writes the next piece of the message.
func (m *Message) Write(p []byte) error {
	if _, err := m.w.Write(p); err != nil {
		return fmt.Errorf("jsonrpc: websocket write: %w", err)
	}
	return nil
}

// Close ends the message.
func (m *Message) Close() error {
	if err := m.w.Close(); err != nil {
		return fmt.Errorf("jsonrpc: websocket write: %w", err)
	}
	return nil
}

// Abort drops the socket: a message cut short cannot be ended cleanly.
func (m *Message) Abort(error) { m.ch.wc.CloseNow() }
