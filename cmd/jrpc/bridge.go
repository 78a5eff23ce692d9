package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

type bridgeFlags struct {
	listen        string
	listenFraming string
	shared        bool
}

func init() {
	var f bridgeFlags
	cmd := &cobra.Command{
		Use:   "bridge --listen URL (URL | --exec 'COMMAND')",
		Short: "Connect two transports: serve --listen URL and forward every message to a target",
		Long: `Listen on one transport and forward every message, untouched (ids, member order,
unknown members, batches), to the target, and every message of the target back:
expose a stdio server (an LSP or MCP server) over WebSocket, TCP or HTTP, or
reach a TCP or WebSocket server from a program that speaks stdio.

  --listen tcp://HOST:PORT, unix:///PATH, ws://HOST:PORT/PATH, http://HOST:PORT/PATH or stdio:

Each connection gets a connection of its own to the target (with --exec, a
subprocess of its own) unless --shared: then all of them share one, and the
bridge gives the requests it forwards ids of its own and puts the original
ids back in the answers (HTTP clients always share one). Requests of the
target go to the connection (with --shared: the oldest) that can take them;
over HTTP they cannot, and get -32601. Both directions work at once.

A connection that ends ends its partner: a client going away closes its
target connection (and stops its subprocess), a target going away (or its
subprocess exiting) closes the client. With --listen stdio: the bridge exits
when either side ends, with the subprocess's exit code. The message size
limit (10 MiB) applies on both sides: a message over it gets -32600.`,
		Example: `  jrpc bridge --listen ws://127.0.0.1:8081/ --exec 'my-lsp-server --stdio'
  jrpc bridge --listen tcp://127.0.0.1:7000 --shared --exec 'jrpc serve --listen stdio:'
  jrpc bridge --listen stdio: tcp://127.0.0.1:9090
  jrpc bridge --listen http://127.0.0.1:8080/ ws://127.0.0.1:8081/ws`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBridgeWith(cmd.Context(), args, &f, func(*bridge) {})
		},
	}
	cmd.Flags().StringVarP(&f.listen, "listen", "l", "", "accept connections on `URL` (tcp://, unix://, ws://, http://, stdio:)")
	cmd.Flags().StringVar(&f.listenFraming, "listen-framing", "", "framing on the listening stream (line or lsp; default: --framing)")
	cmd.Flags().BoolVar(&f.shared, "shared", false, "one target connection (one subprocess) for every client, instead of one each")
	rootCmd.AddCommand(cmd)
}

// runBridgeWith runs a bridge to the target of args; configure may record
// it or give it another target (replay).
func runBridgeWith(ctx context.Context, args []string, f *bridgeFlags, configure func(*bridge)) error {
	if f.listen == "" {
		return &exitError{code: exitUsage, err: errors.New("bridge needs --listen URL"), hint: "jrpc bridge --listen ws://127.0.0.1:8081/ --exec 'COMMAND'"}
	}
	framing := global.framing
	if f.listenFraming != "" {
		framing = f.listenFraming
	}
	lf, err := parseClientFraming(framing, false)
	if err != nil {
		return err
	}
	b := &bridge{framing: lf}
	configure(b)
	if b.open == nil {
		t, _, err := newTarget(args)
		if err != nil {
			return err
		}
		b.t, b.name = t, t.String()
		b.open = func(ctx context.Context) (rawConn, error) {
			if t.isHTTP() {
				return newHTTPUpstream(t), nil
			}
			return t.dialStreamRaw(ctx)
		}
	}
	if f.shared || strings.HasPrefix(f.listen, "http://") {
		b.router = &router{b: b, pending: map[string]*route{}}
	}
	return b.serve(ctx, f.listen)
}

// bridge forwards messages between the clients of a listener and a target.
type bridge struct {
	t       *target                                // nil when open is not a dial (replay)
	name    string                                 // what the target is called in messages
	open    func(context.Context) (rawConn, error) // a message connection to the target
	framing jsonrpc.Framing                        // of the listening side
	router  *router                                // shared target connection; nil: one per client
	rec     *recorder                              // records every message, when set
}

// openTarget opens a message connection to the target.
func (b *bridge) openTarget(ctx context.Context) (rawConn, error) { return b.open(ctx) }

// tap records a client connection's messages when the bridge records.
func (b *bridge) tap(client rawConn) rawConn {
	if b.rec == nil {
		return client
	}
	return &tapped{rawConn: client, rec: b.rec, conn: b.rec.conns.Add(1)}
}

// serve accepts clients on listen until ctx ends (or, for stdio:, until
// either side ends).
func (b *bridge) serve(ctx context.Context, listen string) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	if listen == "stdio:" {
		return b.serveStdio(ctx)
	}
	u, l, err := bridgeListen(listen)
	if err != nil {
		return err
	}
	defer l.Close()
	if b.router != nil {
		if err := b.router.connect(ctx); err != nil {
			return err
		}
		defer b.router.close()
	}
	go func() { <-ctx.Done(); l.Close() }()
	if u.Scheme == "ws" || u.Scheme == "http" {
		return b.serveHTTPOn(ctx, l, u)
	}
	return b.acceptStreams(ctx, l)
}

// bridgeListen listens on a tcp, unix, ws or http URL and says where.
func bridgeListen(listen string) (*url.URL, net.Listener, error) {
	u, err := url.Parse(listen)
	if err != nil || u.Host == "" && u.Scheme != "unix" {
		return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot listen on %q", listen), hint: "tcp://127.0.0.1:7000, unix:///tmp/bridge.sock, ws://127.0.0.1:8081/, http://127.0.0.1:8080/ or stdio:"}
	}
	var l net.Listener
	switch u.Scheme {
	case "tcp", "ws", "http":
		l, err = net.Listen("tcp", u.Host)
	case "unix":
		l, err = net.Listen("unix", unixPath(u))
	default:
		return nil, nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot listen on %q: bridge listens on a tcp, unix, ws or http URL, or stdio", listen)}
	}
	if err != nil {
		return nil, nil, &exitError{code: exitTransport, err: fmt.Errorf("cannot listen on %s: %v", listen, err), hint: "pick another address, or port 0 for a free one"}
	}
	actual := *u
	if u.Scheme != "unix" {
		actual.Host = l.Addr().String()
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", actual.String())
	return u, l, nil
}

// serveHTTPOn serves WebSocket clients (ws://) or HTTP POSTs (http://) at
// the URL's path until ctx ends.
func (b *bridge) serveHTTPOn(ctx context.Context, l net.Listener, u *url.URL) error {
	path := cmp.Or(u.Path, "/")
	mux := http.NewServeMux()
	if u.Scheme == "ws" {
		mux.HandleFunc(path, b.serveWebSocket)
	} else {
		mux.HandleFunc(path, b.router.serveHTTP)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
		return transportError(fmt.Errorf("bridge listener stopped: %v", err), "")
	}
	return nil
}

// acceptStreams serves each stream connection until ctx ends.
func (b *bridge) acceptStreams(ctx context.Context, l net.Listener) error {
	for {
		nc, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return transportError(fmt.Errorf("bridge listener stopped: %v", err), "")
		}
		go b.serveClient(ctx, newStreamRaw(nc, b.framing, nil))
	}
}

func (b *bridge) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	c.SetReadLimit(jsonrpc.DefaultMaxMessageSize)
	b.serveClient(r.Context(), &wsRaw{c: c})
}

// serveStdio bridges standard input and output to the target; it returns
// when either side ends, with the subprocess's exit status.
func (b *bridge) serveStdio(ctx context.Context) error {
	client := b.tap(newStreamRaw(&pipeRWC{r: os.Stdin, w: os.Stdout}, b.framing, nil))
	if b.router != nil {
		if err := b.router.connect(ctx); err != nil {
			return err
		}
		b.router.serveClient(ctx, client)
		return b.router.close()
	}
	up, err := b.openTarget(ctx)
	if err != nil {
		return err
	}
	closeErr := pipe(ctx, client, up)
	var ee *exec.ExitError
	if errors.As(closeErr, &ee) {
		return &exitError{code: ee.ExitCode(), err: fmt.Errorf("%s exited (%v)", b.name, ee)}
	}
	return nil
}

// serveClient bridges one client connection until either side ends.
func (b *bridge) serveClient(ctx context.Context, client rawConn) {
	client = b.tap(client)
	if b.router != nil {
		b.router.serveClient(ctx, client)
		return
	}
	up, err := b.openTarget(ctx)
	if err != nil {
		client.Close()
		fmt.Fprintf(os.Stderr, "jrpc bridge: %s\n", oneLine(err.Error()))
		return
	}
	pipe(ctx, client, up)
}

// pipe forwards messages both ways between a client and its target
// connection until one of them ends, then closes both; it returns what
// closing the target returned (a subprocess's exit status). When the client
// ends first, the answers to its requests still on their way are delivered
// first (for at most bridgeGrace).
func pipe(ctx context.Context, client, up rawConn) error {
	var calls inflight
	// Reads wait for messages only: ending ctx closes both sides below.
	stop := ctx
	ctx = context.WithoutCancel(ctx)
	clientDone := make(chan struct{})
	upDone := make(chan struct{})
	go func() {
		forward(ctx, client, up, func(msg []byte) { calls.sent(msg) })
		close(clientDone)
	}()
	go func() {
		forward(ctx, up, client, func(msg []byte) { calls.answered(msg) })
		close(upDone)
	}()
	select {
	case <-clientDone:
		calls.wait(upDone, bridgeGrace)
	case <-upDone:
	case <-stop.Done():
	}
	client.Close()
	return up.Close()
}

// bridgeGrace bounds how long a bridge waits for the answers to a departed
// client's requests.
const bridgeGrace = 10 * time.Second

// forward copies the messages of from to to until from ends or to fails,
// calling seen with each. A message from cannot take (too large) is
// answered on from with its error.
func forward(ctx context.Context, from, to rawConn, seen func([]byte)) {
	for {
		msg, err := from.Recv(ctx)
		var fe *jsonrpc.FrameError
		if errors.As(err, &fe) && !fe.Fatal {
			from.Send(ctx, frameErrorResponse(fe))
			continue
		}
		if err != nil {
			return
		}
		seen(msg)
		if err := to.Send(ctx, msg); err != nil {
			return
		}
	}
}

// inflight counts the requests forwarded to the target and not answered yet.
type inflight struct {
	mu      sync.Mutex
	pending map[string]int
	changed chan struct{}
}

// ids returns the ids of the requests (or responses, when responses) in a
// message or batch.
func messageIDs(msg []byte, responses bool) []string {
	type env struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	var envs []env
	if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '[' {
		json.Unmarshal(b, &envs)
	} else {
		var e env
		if json.Unmarshal(b, &e) == nil {
			envs = []env{e}
		}
	}
	var ids []string
	for _, e := range envs {
		if e.ID != nil && (e.Method == nil) == responses {
			ids = append(ids, string(compact(e.ID)))
		}
	}
	return ids
}

func (f *inflight) sent(msg []byte) {
	ids := messageIDs(msg, false)
	if len(ids) == 0 {
		return
	}
	f.mu.Lock()
	if f.pending == nil {
		f.pending = map[string]int{}
	}
	for _, id := range ids {
		f.pending[id]++
	}
	f.mu.Unlock()
}

func (f *inflight) answered(msg []byte) {
	ids := messageIDs(msg, true)
	if len(ids) == 0 {
		return
	}
	f.mu.Lock()
	for _, id := range ids {
		if f.pending[id]--; f.pending[id] <= 0 {
			delete(f.pending, id)
		}
	}
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
	f.mu.Unlock()
}

// wait returns when no request is pending, when done closes, or after max.
func (f *inflight) wait(done <-chan struct{}, max time.Duration) {
	deadline := time.After(max)
	for {
		f.mu.Lock()
		if len(f.pending) == 0 {
			f.mu.Unlock()
			return
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-done:
			return
		case <-deadline:
			return
		}
	}
}

func frameErrorResponse(fe *jsonrpc.FrameError) []byte {
	return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.FormatInt(fe.Code, 10) + `,"message":` + string(marshal(fe.Msg)) + `}}`)
}

// queue holds the messages that a target living in this process (an HTTP
// target's replies, a replay) has for the bridge: Recv returns them in
// order, Close ends it.
type queue struct {
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func newQueue() *queue { return &queue{out: make(chan []byte, 64), done: make(chan struct{})} }

// push queues b; it fails once the queue is closed.
func (q *queue) push(ctx context.Context, b []byte) error {
	select {
	case q.out <- b:
		return nil
	case <-q.done:
		return jsonrpc.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *queue) Recv(ctx context.Context) ([]byte, error) {
	select {
	case b := <-q.out:
		return b, nil
	case <-q.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (q *queue) Close() error {
	q.once.Do(func() { close(q.done) })
	return nil
}

// httpUpstream sends each message as one POST to an HTTP target; the
// response bodies come back from Recv, in the order they arrive.
type httpUpstream struct {
	*queue
	t      *target
	client *http.Client
	slots  chan struct{} // bounds the POSTs in flight
}

// maxHTTPInFlight bounds the POSTs a bridge has in flight to an HTTP
// target per connection; more messages wait (and the client with them).
const maxHTTPInFlight = 64

func newHTTPUpstream(t *target) *httpUpstream {
	return &httpUpstream{queue: newQueue(), t: t, client: t.httpClient(), slots: make(chan struct{}, maxHTTPInFlight)}
}

func (h *httpUpstream) Send(ctx context.Context, msg []byte) error {
	select {
	case <-h.done:
		return jsonrpc.ErrClosed
	default:
	}
	select {
	case h.slots <- struct{}{}:
	case <-h.done:
		return jsonrpc.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	msg = bytes.Clone(msg)
	go func() {
		defer func() { <-h.slots }()
		raw := &httpRaw{t: h.t, client: h.client}
		ctx := context.WithoutCancel(ctx)
		if err := raw.Send(ctx, msg); err != nil {
			fmt.Fprintf(os.Stderr, "jrpc bridge: %s\n", oneLine(h.t.transportErr(err).Error()))
			return
		}
		for _, body := range raw.pending {
			h.push(ctx, body)
		}
	}()
	return nil
}

func (h *httpUpstream) Close() error {
	h.client.CloseIdleConnections()
	return h.queue.Close()
}
