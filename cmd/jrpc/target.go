package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	natsgo "github.com/nats-io/nats.go"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/framing"
	jnats "github.com/seedhq/jsonrpc/nats" // also registers nats:// with Dial and Listen
)

// target is what a client command talks to: a URL or a spawned command.
type target struct {
	url     *url.URL // nil with --exec
	raw     string
	command []string // with --exec
	// commandConn is the last connection dialled to the command, whose
	// error says why it ended.
	commandConn *jsonrpc.Conn
	framing     jsonrpc.Framing
	headers     http.Header
	tls         *tls.Config  // client TLS settings (an @endpoint's, --cacert, --cert); nil: the defaults
	watch       *headerWatch // HTTP: the deprecation headers of the last response
	// jwtSecret signs a fresh token per HTTP request and per WebSocket
	// handshake (--jwt-secret).
	jwtSecret []byte
	// notices prints the notifications the server sends during a call on
	// stderr (call and repl; subscribe reads its own).
	notices bool
	// verboseHTTP prints every HTTP request and response of the library's
	// client on stderr, messages included (--streamable -v).
	verboseHTTP bool
	unprinted   atomic.Int64 // notifications read and not printed yet
}

// parseClientFraming parses --framing: line (default) or lsp; serve also
// accepts auto.
func parseClientFraming(s string, serve bool) (jsonrpc.Framing, error) {
	if s == "" {
		if serve {
			return jsonrpc.FramingAuto, nil
		}
		return jsonrpc.FramingLine, nil
	}
	f, err := jsonrpc.ParseFraming(s)
	if err != nil || (!serve && f == jsonrpc.FramingAuto) {
		want := "line or lsp"
		if serve {
			want = "line, lsp or auto"
		}
		return 0, usageErrorf("--framing must be %s, not %q", want, s)
	}
	return f, nil
}

// looksLikeTarget reports whether a command-line argument names a target
// (a URL or an @endpoint) rather than a method.
func looksLikeTarget(a string) bool {
	return strings.HasPrefix(a, "@") || strings.Contains(a, "://") || strings.HasPrefix(a, "unix:")
}

// targetArg splits off the target argument: the first argument, or
// $JRPC_URL when the first argument is no URL (or there is none). With
// --exec there is none.
func targetArg(args []string) (string, []string, error) {
	if global.exec != "" {
		return "", args, nil
	}
	env := os.Getenv("JRPC_URL")
	switch {
	case len(args) > 0 && (looksLikeTarget(args[0]) || env == ""):
		return args[0], args[1:], nil
	case env != "":
		return env, args, nil
	}
	return "", nil, usageErrorf("missing URL")
}

// newTarget builds the target from --exec, the first argument or $JRPC_URL,
// and returns the remaining arguments.
func newTarget(args []string) (*target, []string, error) {
	arg, rest, err := targetArg(args)
	if err != nil {
		return nil, nil, err
	}
	t := &target{headers: http.Header{}}
	s := targetSettings{arg: arg, framing: global.framing, headers: global.headers, command: global.exec}
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		if err := s.fromEndpoint(t, name); err != nil {
			return nil, nil, err
		}
	}
	if err := t.configure(s); err != nil {
		return nil, nil, err
	}
	if s.command != "" {
		err = t.setCommand(s.command)
	} else {
		t.raw = s.arg
		t.url, err = parseTargetURL(s.arg)
	}
	if err != nil {
		return nil, nil, err
	}
	return t, rest, nil
}

// targetSettings are what the command line (or a named endpoint) says of
// the target.
type targetSettings struct {
	arg, framing, command string
	headers               []string
}

// fromEndpoint takes the settings of the named endpoint @name: its URL or
// command, TLS files and headers; the command line's framing and headers
// win.
func (s *targetSettings) fromEndpoint(t *target, name string) error {
	ep, err := lookupEndpoint(name)
	if err != nil {
		return err
	}
	if t.tls, err = ep.tlsConfig(); err != nil {
		return err
	}
	if s.framing == "" {
		s.framing = ep.framing
	}
	s.headers = append(slices.Clone(ep.headers), s.headers...)
	s.arg, s.command = ep.url, ep.exec
	return nil
}

// configure sets the target's framing, headers and security.
func (t *target) configure(s targetSettings) error {
	var err error
	if t.framing, err = parseClientFraming(s.framing, false); err != nil {
		return err
	}
	for _, h := range s.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return usageErrorf("--header %q is not K:V (e.g. --header 'Authorization: Bearer TOKEN')", h)
		}
		t.headers.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return t.applySecurity()
}

// setCommand makes the target the --exec command line.
func (t *target) setCommand(command string) error {
	argv, err := splitCommand(command)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return usageErrorf("--exec names no command")
	}
	t.command, t.raw = argv, "command '"+command+"'"
	return nil
}

// dialable tells whether arg parsed (as u, err) is a URL at all: a
// scheme, and a host after :// (unix: a path will do).
func dialable(arg string, u *url.URL, err error) bool {
	switch {
	case err != nil || u.Scheme == "":
		return false
	case u.Scheme == "unix":
		return true
	}
	return u.Host != "" && strings.Contains(arg, "://")
}

// parseTargetURL parses a target's URL, refusing (with a hint) what jrpc
// cannot dial.
func parseTargetURL(arg string) (*url.URL, error) {
	u, err := url.Parse(arg)
	if !dialable(arg, u, err) {
		hint := "a URL such as http://127.0.0.1:8080/, ws://127.0.0.1:8080/, tcp://127.0.0.1:9090 or unix:///path/to/socket, or --exec 'COMMAND'"
		if _, _, herr := net.SplitHostPort(arg); herr == nil { // host:port
			hint = fmt.Sprintf("http://%s/, ws://%s/ or tcp://%s", arg, arg, arg)
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%q is not a URL jrpc can dial", arg), hint: hint}
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss", "unix":
		return u, nil
	case "tcp", "tls":
		if u.Port() == "" {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s names no port (%s:// has no default port)", arg, u.Scheme),
				hint: "tcp://" + u.Hostname() + ":9090 (the port jrpc serve uses)"}
		}
		return u, nil
	case "nats":
		if strings.Trim(u.Path, "/") == "" {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s names no subject", arg), hint: "nats://" + u.Host + "/SUBJECT"}
		}
		return withNATSCreds(u), nil
	}
	return nil, &exitError{code: exitUsage, err: fmt.Errorf("unsupported URL scheme %q in %s", u.Scheme, arg),
		hint: "http://, https://, ws://, wss://, tcp://, tls://, unix:// or nats://host:port/subject (or --exec 'COMMAND' for stdio)"}
}

// withNATSCreds adds --nats-creds to a nats:// URL that names no
// credentials file of its own.
func withNATSCreds(u *url.URL) *url.URL {
	if global.natsCreds == "" || u.Query().Has("creds") {
		return u
	}
	c := *u
	q := c.Query()
	q.Set("creds", global.natsCreds)
	c.RawQuery = q.Encode()
	return &c
}

func (t *target) String() string { return t.raw }

// isHTTP reports whether each message is its own HTTP request.
func (t *target) isHTTP() bool {
	return t.url != nil && (t.url.Scheme == "http" || t.url.Scheme == "https")
}

// isStream reports whether the target's URL names a stream transport (a
// connection, whichever side calls).
func (t *target) isStream() bool {
	switch t.url.Scheme {
	case "ws", "wss", "tcp", "tls", "unix":
		return true
	}
	return false
}

// client is what jrpc talks to a target through: a jsonrpc.Client, and the
// connection under it, which the server can push on (nil over plain HTTP).
type client interface {
	jsonrpc.Client
	conn() *jsonrpc.Conn
}

// connClient is a client over a connection; plainClient one over plain HTTP.
type (
	connClient  struct{ *jsonrpc.Conn }
	plainClient struct{ jsonrpc.Client }
)

func (c connClient) conn() *jsonrpc.Conn { return c.Conn }
func (plainClient) conn() *jsonrpc.Conn  { return nil }

// dial returns a client for the target: a connection for every target but
// plain HTTP (Streamable HTTP with --streamable).
func (t *target) dial(ctx context.Context) (client, error) {
	opts, err := t.dialOptions()
	if err != nil {
		return nil, err
	}
	switch {
	case t.command != nil:
		c, err := jsonrpc.DialCommand(ctx, t.command[0], t.command[1:], opts...)
		if err != nil {
			return nil, t.transportErr(err)
		}
		t.commandConn = c
		return connClient{c}, nil
	case !t.isStream() && !(t.isHTTP() && global.streamable):
		// Plain HTTP, and schemes registered by other modules (nats://),
		// whose clients are not connections.
		c, err := jsonrpc.Dial(ctx, t.url.String(), opts...)
		if err != nil {
			return nil, t.transportErr(err)
		}
		return plainClient{c}, nil
	}
	c, err := jsonrpc.DialConn(ctx, t.url.String(), opts...)
	if err != nil {
		return nil, t.transportErr(err)
	}
	return connClient{c}, nil
}

// dialOptions are the target's options for jsonrpc.Dial and DialCommand.
func (t *target) dialOptions() ([]jsonrpc.DialOption, error) {
	opts := []jsonrpc.DialOption{jsonrpc.WithFraming(t.framing), jsonrpc.WithMaxMessageSize(global.maxSize)}
	if t.command != nil {
		opts = append(opts, jsonrpc.WithStderr(os.Stderr), jsonrpc.WithGracePeriod(3*time.Second))
		if rootCmd.PersistentFlags().Changed("mcp-version") {
			// An MCP server over stdio: its era found as over Streamable HTTP.
			opts = append(opts, jsonrpc.WithMCPVersion(global.mcpVersion), jsonrpc.WithMCPClientInfo("jrpc", version()), jsonrpc.WithMCPCapabilities(mcpCapabilities()))
		}
		if t.notices {
			opts = append(opts, t.serverMessages()...)
		}
		return opts, nil
	}
	if t.tls != nil {
		opts = append(opts, jsonrpc.WithTLSConfig(t.tls))
	}
	headers := t.headers
	if t.isWS() {
		h, err := t.handshakeHeaders()
		if err != nil {
			return nil, err
		}
		headers = h
	}
	for k, vs := range headers {
		for _, v := range vs {
			opts = append(opts, jsonrpc.WithHeader(k, v))
		}
	}
	switch {
	case t.isHTTP() && global.streamable:
		opts = append(opts, jsonrpc.WithHTTPClient(t.httpClient()), jsonrpc.WithMCPVersion(global.mcpVersion), jsonrpc.WithMCPClientInfo("jrpc", version()), jsonrpc.WithMCPCapabilities(mcpCapabilities()))
		opts = append(opts, t.serverMessages()...)
	case t.isHTTP():
		opts = append(opts, jsonrpc.WithHTTPClient(t.httpClient()))
	case t.notices:
		opts = append(opts, t.serverMessages()...)
	}
	return opts, nil
}

// serverMessages is what serves the messages a server sends jrpc during a
// call (streams, Streamable HTTP): each notification is printed on stderr as
// it arrives, in order; a request gets -32601 (jrpc serves no methods).
// Messages are counted as they are read (Admit runs on the reading path),
// so drainNotices can wait for those that came before the answer.
func (t *target) serverMessages() []jsonrpc.DialOption {
	return []jsonrpc.DialOption{
		jsonrpc.WithMaxConcurrency(1),
		jsonrpc.WithAdmit(func(_ context.Context, n int) error {
			t.unprinted.Add(int64(n))
			return nil
		}),
		jsonrpc.WithHandler(jsonrpc.HandlerFunc(func(_ context.Context, req *jsonrpc.Request) (any, error) {
			defer t.unprinted.Add(-1)
			if r, handled, err := askUser(req); handled {
				return r, err
			}
			if !req.IsNotification() {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method + " (jrpc serves no methods)"}
			}
			var params []byte
			if req.Params != nil {
				params = req.Params
			}
			logWire("<--", appendEnvelope(nil, nil, req.Method, params))
			return nil, nil
		})),
	}
}

// drainNotices waits (a little, at most) until the notifications that
// arrived before a call's answer are printed, so they show before it.
func (t *target) drainNotices() {
	for deadline := time.Now().Add(time.Second); t.unprinted.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// transportErr turns the error of an exchange into an exitError by the exit
// code rule (exit.go): a refusal by the server (a JSON-RPC error, HTTP 413
// or 429, WebSocket close 1009) is exit 1; a failure to reach or talk to the
// target is exit 3, with what went wrong and what to try.
func (t *target) transportErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	if re := refusal(err); re != nil {
		return rpcErrorExit(re)
	}
	if tlsErr := t.tlsFailure(err); tlsErr != nil {
		return tlsErr
	}
	if cerr := t.connectFailure(err); cerr != nil {
		return cerr
	}
	return t.exchangeFailure(err)
}

// connectFailure explains a failure to reach the target (or to start it),
// or returns nil.
func (t *target) connectFailure(err error) error {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return transportError(fmt.Errorf("cannot connect to %s: connection refused", t), fmt.Sprintf("check the host and port, or start a server there: jrpc serve --listen %s", t.listenHint()))
	case t.url != nil && t.url.Scheme == "unix" && errors.Is(err, os.ErrNotExist):
		return transportError(fmt.Errorf("cannot connect to %s: no socket at %s", t, unixPath(t.url)), fmt.Sprintf("check the path, or start a server there: jrpc serve --listen %s", t))
	case t.url != nil && t.url.Scheme == "nats" && strings.Contains(err.Error(), "timeout"): // the NATS greeting never came
		if err := t.wrongProtocol(); err != nil {
			return err
		}
		return transportError(fmt.Errorf("%s: %v", t, err), "is a NATS server listening there? (it greets with INFO)")
	case errors.As(err, &dnsErr):
		return transportError(fmt.Errorf("cannot connect to %s: unknown host %s", t, dnsErr.Name), "check the host name in the URL")
	case errors.Is(err, exec.ErrNotFound), t.command != nil && errors.Is(err, os.ErrNotExist):
		return transportError(fmt.Errorf("cannot start %s: %v", t, err), "check the command given to --exec (is it installed and on $PATH?)")
	}
	return nil
}

// commandGone reports whether err says an --exec command exited or closed
// its pipes: the library's error (it matches ErrClosed) or the exit status
// commandExit found.
func commandGone(err error) bool {
	var exitErr *exec.ExitError
	return errors.As(err, &exitErr) || errors.Is(err, jsonrpc.ErrClosed)
}

// exchangeFailure explains the failure of an exchange with a target it
// reached.
func (t *target) exchangeFailure(err error) error {
	var httpErr *jsonrpc.HTTPError
	switch {
	case t.command != nil && commandGone(err):
		return t.commandEnded(err)
	case errors.Is(err, context.DeadlineExceeded):
		return t.timedOut()
	case errors.Is(err, context.Canceled):
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	case errors.Is(err, jsonrpc.ErrMessageTooLarge):
		return transportError(fmt.Errorf("%s: %v", t, err), "raise the limit, e.g. --max-message-size "+strconv.FormatInt(4*global.maxSize, 10))
	case errors.As(err, &httpErr) && t.isWS() && !refusalStatus(httpErr.StatusCode):
		return transportError(fmt.Errorf("%s answered HTTP %d instead of a WebSocket upgrade: this port speaks HTTP, not WebSocket", t, httpErr.StatusCode),
			"call it over HTTP: "+t.withScheme("http"))
	case errors.As(err, &httpErr):
		return transportError(fmt.Errorf("HTTP %d %s from %s: %s", httpErr.StatusCode, http.StatusText(httpErr.StatusCode), t, snippet([]byte(httpErr.Body))), t.httpHint(httpErr))
	case strings.Contains(err.Error(), "malformed HTTP"):
		return t.notHTTP()
	case errors.Is(err, jsonrpc.ErrClosed), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		if err := t.wrongProtocol(); err != nil {
			return err
		}
		return transportError(fmt.Errorf("the connection to %s closed before the answer came (%v)", t, err), "the server may have crashed or dropped the message: look at its log (jrpc serve -v)")
	}
	return t.otherFailure(err)
}

// otherFailure reports a failure no other rule explains: an HTML page in
// answer is named by its title.
func (t *target) otherFailure(err error) error {
	msg := err.Error()
	if _, page, ok := strings.Cut(msg, `answered with Content-Type "text/html`); ok {
		if _, body, ok := strings.Cut(page, "not application/json: "); ok && htmlTitle(body) != "" {
			return transportError(fmt.Errorf("%s answered with an HTML page (%q): it does not speak JSON-RPC", t, htmlTitle(body)), "check the URL: is a JSON-RPC server at this path?")
		}
	}
	return transportError(fmt.Errorf("%s: %v", t, err), "")
}

// timedOut explains a call that got no answer within --timeout: the port
// may have answered in something other than JSON-RPC and kept the
// connection open.
func (t *target) timedOut() error {
	if err := t.wrongProtocol(); err != nil {
		return err
	}
	return transportError(fmt.Errorf("no answer from %s within %v", t, global.timeout), "a larger --timeout (e.g. --timeout 2m, or 0 for none), or check that the server is not stuck")
}

func (t *target) isWS() bool {
	return t.url != nil && (t.url.Scheme == "ws" || t.url.Scheme == "wss")
}

// withScheme returns the target's URL with another scheme (https for http
// when the target used TLS).
func (t *target) withScheme(scheme string) string {
	u := *t.url
	if u.Scheme == "https" || u.Scheme == "wss" {
		if scheme != "tcp" {
			scheme += "s"
		}
	}
	u.Scheme = scheme
	if scheme == "tcp" {
		u.Path = ""
	}
	return u.String()
}

// notHTTP reports an HTTP or WebSocket target whose port answered with
// something other than HTTP.
func (t *target) notHTTP() error {
	return transportError(fmt.Errorf("%s did not answer in HTTP: this port speaks something else (a JSON-RPC stream?), not HTTP", t),
		"talk to it as a stream: "+t.withScheme("tcp"))
}

// notStream reports a tcp or unix target whose port answered in HTTP.
func (t *target) notStream() error {
	return transportError(fmt.Errorf("%s answered in HTTP: this port speaks HTTP, not a JSON-RPC stream", t),
		"call it over HTTP: http://"+t.url.Host+"/ (or ws:// for WebSocket)")
}

func (t *target) listenHint() string {
	if t.url == nil {
		return "stdio:"
	}
	if t.url.Scheme == "https" || t.url.Scheme == "wss" {
		return strings.Replace(t.url.String(), "s://", "://", 1)
	}
	return t.url.String()
}

func unixPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	return u.Host + u.Path
}

// callContext returns the context of one call, bounded by --timeout.
func callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if global.timeout > 0 {
		return context.WithTimeout(ctx, global.timeout)
	}
	return context.WithCancel(ctx)
}

// rawConn exchanges whole messages with the target, exactly as written and
// read: for --id, -v and batch, where the envelopes matter.
type rawConn interface {
	// Send sends one message.
	Send(ctx context.Context, msg []byte) error
	// Recv returns the next message from the server. Over HTTP it returns
	// the bodies of the responses to what was sent, then errNoMore.
	Recv(ctx context.Context) ([]byte, error)
	Close() error
}

// errNoMore is returned by Recv over HTTP when every response body has been read.
var errNoMore = errors.New("the server sent no response body (HTTP 204/202: it took the message as a notification)")

// dialRaw opens a raw exchange with the target. With verbose, every
// message is printed on stderr as sent (-->) and received (<--), and over
// HTTP the request and status lines and headers too (> and <, as curl -v).
func (t *target) dialRaw(ctx context.Context, verbose bool) (rawConn, error) {
	if t.isHTTP() {
		return &httpRaw{t: t, client: t.httpClient(), verbose: verbose}, nil
	}
	rc, err := t.dialStreamRaw(ctx)
	if err != nil || !verbose {
		return rc, err
	}
	return loggedRaw{rc}, nil
}

// loggedRaw prints the messages of a raw exchange on stderr.
type loggedRaw struct{ rawConn }

func (l loggedRaw) Send(ctx context.Context, msg []byte) error {
	logWire("-->", msg)
	return l.rawConn.Send(ctx, msg)
}

func (l loggedRaw) Recv(ctx context.Context) ([]byte, error) {
	b, err := l.rawConn.Recv(ctx)
	if err == nil {
		logWire("<--", b)
	}
	return b, err
}

// dialStreamRaw opens a raw exchange over a message stream (not HTTP).
func (t *target) dialStreamRaw(ctx context.Context) (rawConn, error) {
	if t.command != nil {
		rc, err := startCommand(t.command, t.framing)
		if err != nil {
			return nil, t.transportErr(err)
		}
		return rc, nil
	}
	switch t.url.Scheme {
	case "nats":
		c, err := jnats.Dial(ctx, t.url.String())
		if err != nil {
			return nil, t.transportErr(err)
		}
		return &natsRaw{c: c, subject: strings.Trim(t.url.Path, "/")}, nil
	case "ws", "wss":
		c, _, err := websocket.Dial(ctx, t.url.String(), &websocket.DialOptions{HTTPHeader: t.headers, HTTPClient: t.httpClient()})
		if err != nil {
			return nil, t.transportErr(err)
		}
		c.SetReadLimit(global.maxSize)
		return &wsRaw{c: c}, nil
	}
	network, addr := t.url.Scheme, t.url.Host
	if network == "unix" {
		addr = unixPath(t.url)
	}
	var nc net.Conn
	var err error
	if network == "tls" {
		d := tls.Dialer{Config: t.tls}
		nc, err = d.DialContext(ctx, "tcp", addr)
	} else {
		var d net.Dialer
		nc, err = d.DialContext(ctx, network, addr)
	}
	if err != nil {
		return nil, t.transportErr(err)
	}
	return newStreamRaw(nc, t.framing, nil), nil
}

// httpClient returns the HTTP client of raw exchanges, with the target's TLS
// settings.
func (t *target) httpClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if t.tls != nil {
		tr.TLSClientConfig = t.tls
	}
	if t.watch == nil {
		t.watch = &headerWatch{}
	}
	t.watch.base = t.withCredentials(tr)
	if t.verboseHTTP {
		return &http.Client{Transport: loggedHTTP{t.watch}}
	}
	return &http.Client{Transport: t.watch}
}

// streamRaw is a raw exchange over a byte stream, framed as a jsonrpc.Conn
// frames it (internal/framing), with no Conn: --max-message-size is its
// size limit, and a stalled write on a socket fails after
// jsonrpc.DefaultWriteTimeout.
type streamRaw struct {
	st     *framing.Stream
	closer func() error
	once   sync.Once
}

func newStreamRaw(rwc io.ReadWriteCloser, f jsonrpc.Framing, closer func() error) *streamRaw {
	var wto time.Duration
	if _, socket := rwc.(net.Conn); socket {
		wto = jsonrpc.DefaultWriteTimeout
	}
	return &streamRaw{st: framing.New(rwc, framing.Framing(f), global.maxSize, wto), closer: closer}
}

func (s *streamRaw) Send(ctx context.Context, msg []byte) error { return s.st.Send(msg) }

// recv reads the next message; a message the stream could not take is a
// *jsonrpc.FrameError, as from a jsonrpc.Channel.
func (s *streamRaw) recv() ([]byte, error) {
	msg, err := s.st.Recv()
	if fe, ok := err.(*framing.Error); ok {
		return nil, &jsonrpc.FrameError{Fatal: fe.Fatal, Code: fe.Code, Msg: fe.Msg}
	}
	return msg, err
}

func (s *streamRaw) Recv(ctx context.Context) ([]byte, error) {
	if ctx.Done() == nil { // nothing to wait for but the message (Close unblocks it)
		return s.recv()
	}
	type res struct {
		b   []byte
		err error
	}
	done := make(chan res, 1)
	go func() { b, err := s.recv(); done <- res{b, err} }()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

func (s *streamRaw) Close() error {
	var err error
	s.once.Do(func() {
		err = s.st.Close()
		if s.closer != nil {
			err = s.closer()
		}
	})
	return err
}

// wsRaw is a raw exchange over WebSocket text frames.
type wsRaw struct{ c *websocket.Conn }

func (w *wsRaw) Send(ctx context.Context, msg []byte) error {
	return w.c.Write(ctx, websocket.MessageText, msg)
}

func (w *wsRaw) Recv(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	return b, err
}

func (w *wsRaw) Close() error { return w.c.Close(websocket.StatusNormalClosure, "") }

// httpRaw is a raw exchange over HTTP: each Send is one POST whose response
// body (if any) is queued for Recv.
type httpRaw struct {
	t       *target
	client  *http.Client
	verbose bool
	pending [][]byte
}

func (h *httpRaw) Send(ctx context.Context, msg []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.t.url.String(), bytes.NewReader(msg))
	if err != nil {
		return err
	}
	for k, vs := range h.t.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "jrpc/"+strings.Fields(version())[0])
	if h.verbose {
		fmt.Fprintf(os.Stderr, "> %s %s %s\n> Host: %s\n", req.Method, req.URL.RequestURI(), req.Proto, req.URL.Host)
		logHeaders(">", req.Header)
		fmt.Fprintf(os.Stderr, "> Content-Length: %d\n>\n", len(msg))
		logWire("-->", msg)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if h.verbose {
		fmt.Fprintf(os.Stderr, "< %s %s\n", resp.Proto, resp.Status)
		logHeaders("<", resp.Header)
		fmt.Fprintln(os.Stderr, "<")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, global.maxSize+1))
	if err != nil {
		return err
	}
	if h.verbose && len(bytes.TrimSpace(body)) > 0 {
		logWire("<--", body)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusAccepted {
		var e envelope
		if json.Unmarshal(body, &e) == nil && e.Error != nil {
			h.pending = append(h.pending, body) // a JSON-RPC answer, whatever the status (429)
			return nil
		}
		return &jsonrpc.HTTPError{StatusCode: resp.StatusCode, Header: resp.Header, Body: string(body[:min(len(body), 4096)])}
	}
	if len(bytes.TrimSpace(body)) > 0 {
		h.pending = append(h.pending, body)
	}
	return nil
}

func (h *httpRaw) Recv(ctx context.Context) ([]byte, error) {
	if len(h.pending) == 0 {
		return nil, errNoMore
	}
	b := h.pending[0]
	h.pending = h.pending[1:]
	return b, nil
}

func (h *httpRaw) Close() error { h.client.CloseIdleConnections(); return nil }

// logHeaders prints HTTP headers on stderr, sorted, each line after dir.
func logHeaders(dir string, hd http.Header) {
	for _, k := range slices.Sorted(maps.Keys(hd)) {
		for _, v := range hd[k] {
			fmt.Fprintf(os.Stderr, "%s %s: %s\n", dir, k, v)
		}
	}
}

// snippet is the start of a response body for a message: the title of an
// HTML page (a proxy's error page), else its first 200 bytes.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if title := htmlTitle(s); title != "" {
		return title + " (an HTML page)"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}

// htmlTitle returns the text of an HTML page's <title> (or first <h1>), or
// "" when s is not HTML.
func htmlTitle(s string) string {
	if !strings.HasPrefix(s, "<") {
		return ""
	}
	lower := strings.ToLower(s)
	for _, tag := range []string{"title", "h1"} {
		i := strings.Index(lower, "<"+tag+">")
		j := strings.Index(lower, "</"+tag+">")
		if i >= 0 && j > i {
			return strings.Join(strings.Fields(s[i+len(tag)+2:j]), " ")
		}
	}
	return ""
}

// httpHint says what to try after an HTTP error status.
func (t *target) httpHint(he *jsonrpc.HTTPError) string {
	switch status := he.StatusCode; status {
	case http.StatusBadRequest:
		if strings.Contains(he.Body, "Mcp-Session-Id") && !global.streamable {
			return "this is an MCP server speaking Streamable HTTP: add --streamable (jrpc --streamable " + strings.TrimPrefix(t.commandLine("call"), "jrpc ") + " …)"
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		if t.headers.Get("Authorization") != "" || len(t.jwtSecret) > 0 {
			return "the server refused the credentials sent: check the token (expired? for another audience or issuer?) or the --jwt-secret file; WWW-Authenticate says why (jrpc call -v shows it)"
		}
		return "add credentials: --bearer TOKEN (or $JRPC_BEARER), --jwt-secret FILE for a geth-style secret, or --cert FILE --key FILE"
	case http.StatusUpgradeRequired:
		return "this endpoint speaks WebSocket: " + t.withScheme("ws")
	case http.StatusNotFound:
		return "check the path in the URL"
	case http.StatusMethodNotAllowed, http.StatusUnsupportedMediaType:
		return "is this a JSON-RPC endpoint? check the URL"
	case http.StatusRequestEntityTooLarge:
		return "send smaller params"
	}
	return ""
}

// startCommand spawns argv with its stdin and stdout as a message stream and
// its stderr shown on ours.
func startCommand(argv []string, f jsonrpc.Framing) (*streamRaw, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
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
	rwc := &pipeRWC{r: stdout, w: stdin}
	wait := func() error {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return err
		case <-time.After(3 * time.Second):
			cmd.Process.Kill()
			return <-done
		}
	}
	return newStreamRaw(rwc, f, wait), nil
}

type pipeRWC struct {
	r io.ReadCloser
	w io.WriteCloser
}

func (p *pipeRWC) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeRWC) Close() error                { return p.w.Close() }

// splitCommand splits a command line like a POSIX shell would (quotes and
// backslashes; no expansions).
func splitCommand(s string) ([]string, error) {
	w := shellWords{s: s}
	for i := 0; i < len(s); {
		var err error
		if i, err = w.next(i); err != nil {
			return nil, err
		}
	}
	w.endWord()
	return w.args, nil
}

// shellWords is splitCommand's state: the words so far and the one being
// read (inArg: one has begun, maybe empty as in ”).
type shellWords struct {
	s     string
	args  []string
	cur   strings.Builder
	inArg bool
}

// next reads what begins at s[i] and returns where the next begins.
func (w *shellWords) next(i int) (int, error) {
	switch c := w.s[i]; c {
	case '\\':
		if i+1 < len(w.s) {
			w.cur.WriteByte(w.s[i+1])
		}
		w.inArg = true
		return i + 2, nil
	case '\'':
		return w.singleQuoted(i)
	case '"':
		return w.doubleQuoted(i)
	case ' ', '\t', '\n':
		w.endWord()
	default:
		w.cur.WriteByte(c)
		w.inArg = true
	}
	return i + 1, nil
}

// singleQuoted reads '…' (nothing escaped inside).
func (w *shellWords) singleQuoted(i int) (int, error) {
	j := strings.IndexByte(w.s[i+1:], '\'')
	if j < 0 {
		return 0, usageErrorf("--exec %q: unterminated single quote", w.s)
	}
	w.cur.WriteString(w.s[i+1 : i+1+j])
	w.inArg = true
	return i + j + 2, nil
}

// doubleQuoted reads "…", where a backslash escapes " \ $ and `.
func (w *shellWords) doubleQuoted(i int) (int, error) {
	for i++; i < len(w.s) && w.s[i] != '"'; i++ {
		if w.s[i] == '\\' && i+1 < len(w.s) && strings.IndexByte("\"\\$`", w.s[i+1]) >= 0 {
			i++
		}
		w.cur.WriteByte(w.s[i])
	}
	if i >= len(w.s) {
		return 0, usageErrorf("--exec %q: unterminated double quote", w.s)
	}
	w.inArg = true
	return i + 1, nil
}

// endWord ends the word being read, if one has begun.
func (w *shellWords) endWord() {
	if w.inArg {
		w.args = append(w.args, w.cur.String())
		w.cur.Reset()
		w.inArg = false
	}
}

// natsRaw is a raw exchange over NATS request/reply: each message sent is a
// request; Recv returns the replies that carried a message (a notification
// gets an empty acknowledgement), then errNoMore.
type natsRaw struct {
	c       *jnats.Client
	subject string
	pending [][]byte
}

func (n *natsRaw) Send(ctx context.Context, msg []byte) error {
	reply, err := n.c.Conn().RequestWithContext(ctx, n.subject, msg)
	if err != nil {
		if errors.Is(err, natsgo.ErrNoResponders) {
			return fmt.Errorf("%w %q (%w)", jnats.ErrNoResponders, n.subject, err)
		}
		return err
	}
	if len(bytes.TrimSpace(reply.Data)) > 0 {
		n.pending = append(n.pending, reply.Data)
	}
	return nil
}

func (n *natsRaw) Recv(ctx context.Context) ([]byte, error) {
	if len(n.pending) == 0 {
		return nil, errNoMore
	}
	b := n.pending[0]
	n.pending = n.pending[1:]
	return b, nil
}

func (n *natsRaw) Close() error { return n.c.Close() }
