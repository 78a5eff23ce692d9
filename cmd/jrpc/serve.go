package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/explorer"
	"github.com/seedhq/jsonrpc/internal/demo"
	jmcp "github.com/seedhq/jsonrpc/mcp"
	"github.com/spf13/cobra"
)

var defaultListen = []string{"http://127.0.0.1:8080/", "tcp://127.0.0.1:9090"}

func init() {
	var (
		listen    []string
		verbose   bool
		shutdown  time.Duration
		obs       observeFlags
		deploy    deployFlags
		sockMode  string
		timeouts  struct{ handler, body time.Duration }
		mcp       bool
		fixture   bool
		stateKeys []string
		stateURL  string
		streams   struct{ keepAlive, idle time.Duration }
		sec       serveSecurity
	)
	cmd := &cobra.Command{
		Use:   "serve [--listen URL]...",
		Short: "Serve the demo service on one or more listeners",
		Long: `Serve the demo service (subtract, minus (deprecated), sum, update,
notify_hello, get_data, echo, sleep, big, countdown (notifies its caller during
the call), error, panic, bad_result, demo_subscribe and demo_unsubscribe
(subscriptions: ticker, large, broadcast), demo_broadcast (sends its value to
every broadcast subscriber), tools/list, tools/call and rpc.discover, with params checked
against the methods' schemas) on every --listen URL at once:

  http://127.0.0.1:8080/path   HTTP POST
  ws://127.0.0.1:8081/path     WebSocket
  tcp://127.0.0.1:9090         TCP (framing auto-detected per connection unless --framing)
  unix:///tmp/jrpc.sock        unix socket (file mode 0600 unless --socket-mode)
  unix://@name                 abstract unix socket (Linux)
  stdio:                       standard input and output (logs stay on stderr)
  https://…, wss://…, tls://127.0.0.1:9443
                               the same over TLS (--tls-cert, --tls-key; mutual
                               TLS with --client-ca)

Security: --jwt-secret FILE (geth-style HS256 JWTs) or --auth-jwks FILE|URL
--auth-issuer ISS (OAuth access tokens; metadata at
/.well-known/oauth-protected-resource) authenticate http and ws callers
(every 401 carries WWW-Authenticate); --allow-origin PATTERN lets browser
pages on other origins call (cross-origin requests are refused otherwise);
--rate-limit N allows N requests per second per client (HTTP 429, -32005 on
streams).

Several instances: --state nats://HOST:PORT keeps the demo's shared state in
a NATS server with JetStream (nats-server -js), so that every instance given
the same server serves as one behind a load balancer with no affinity:
demo_broadcast on any instance reaches the broadcast subscribers of all, and
with --mcp test_trigger_tool_change reaches every subscriptions/listen for
tools, an MCP 2025 session continues through any instance (a DELETE ends
it on all), a cut event stream resumes with Last-Event-ID through any
instance, and a multi round-trip started on one instance finishes on any
other (the requestState keys are a ring in NATS; the first instance puts a
random key in an empty ring). serve does not start without the server (exit 3); when it is down
later, calls that need it fail at once (-32050; a session's requests: HTTP
503, -32030) and the others go on.

Without --listen it serves ` + strings.Join(defaultListen, " and ") + `.
Each listener's actual address is printed on stderr as "listening on URL"
(port 0 picks a free port). A unix socket path never replaces a file: serve
refuses a path that holds anything but a socket, or a socket another server
answers on, and removes only a stale socket. SIGINT or SIGTERM shuts down
gracefully: calls in flight are finished (for at most --shutdown-timeout).
With stdio: the server exits 0 when standard input ends and every request
has been answered, or when the input cannot be read further (a bad
Content-Length header: answered with -32700, and logged); it exits non-zero
only when it fails itself (it cannot listen or write).`,
		Example: `  jrpc serve
  jrpc serve --listen tcp://127.0.0.1:0 --listen ws://127.0.0.1:8081/ -v
  jrpc serve --listen stdio: --framing lsp
  jrpc serve --mcp --listen http://127.0.0.1:8080/mcp
  jrpc serve --mcp --listen stdio:
  jrpc serve --mcp --listen http://127.0.0.1:8081/mcp --state nats://127.0.0.1:4222
  jrpc serve --listen https://127.0.0.1:8443/ --tls-cert server.crt --tls-key server.key --client-ca ca.crt
  jrpc serve --listen http://127.0.0.1:8551/ --jwt-secret jwt.hex`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mode, err := parseSocketMode(sockMode)
			if err != nil {
				return err
			}
			var st *sharedState
			if stateURL != "" {
				if fixture {
					return usageErrorf("--state shares the demo's state (with or without --mcp), not --mcp-fixture's")
				}
				if st, err = openState(cmd.Context(), stateURL); err != nil {
					return err
				}
				defer st.close()
			}
			srv, opts := newDemoServer(st.shared()), []jsonrpc.ListenOption{jsonrpc.ListenSocketMode(mode)}
			if fixture {
				keys, err := parseStateKeys(stateKeys)
				if err != nil {
					return err
				}
				f := mcpFixture(keys)
				srv = &jsonrpc.Server{Handler: f.Mux(), Convention: jsonrpc.ConventionMCP, HandlerTimeout: -1}
				opts = append(opts, jsonrpc.ListenStreamableHTTP(f.StreamableHTTPOptions()))
				mcp = true
			} else if mcp {
				keys, err := parseStateKeys(stateKeys)
				if err != nil {
					return err
				}
				srv = &jsonrpc.Server{Handler: st.shared().NewMCPMux(keys...), Convention: jsonrpc.ConventionMCP}
				opts = append(opts, jsonrpc.ListenStreamableHTTP(st.streamableHTTP(jsonrpc.StreamableHTTPOptions{
					Sessions:           true,
					ProtocolVersions:   jmcp.SessionVersions,
					StatelessVersions:  jmcp.StatelessVersions,
					ToolInputSchema:    demo.DemoTools().InputSchema,
					KeepAlive:          streams.keepAlive,
					SessionIdleTimeout: streams.idle,
				})))
			}
			srv.HandlerTimeout, srv.HTTPBodyTimeout = timeouts.handler, timeouts.body
			dopts, err := deploy.apply(srv)
			if err != nil {
				return err
			}
			secOpts, err := sec.apply(cmd.Context(), srv, listen)
			if err != nil {
				return err
			}
			if mcp && len(srv.AllowedHosts) == 0 && loopbackHTTPOnly(listen) {
				// MCP servers on localhost must stop DNS rebinding: a page
				// whose name resolves to 127.0.0.1 sends its own Host
				// (and a matching Origin). --allow-host replaces this list.
				srv.AllowedHosts = []string{"localhost", "127.0.0.1", "[::1]"}
			}
			return runServe(cmd.Context(), srv, serving{listen: listen, verbose: verbose, shutdown: shutdown, obs: &obs, opts: append(append(dopts, secOpts...), opts...)})
		},
	}
	cmd.Flags().StringArrayVarP(&listen, "listen", "l", nil, "serve on `URL` (http://, ws://, tcp://, unix://, stdio:, nats://host:port/subject); repeatable")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log every call (method, id, duration, outcome, error code, transport, remote address) and every protocol error on stderr")
	obs.register(cmd)
	deploy.register(cmd)
	sec.register(cmd)
	cmd.Flags().DurationVar(&shutdown, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, wait this long for calls in flight")
	cmd.Flags().DurationVar(&timeouts.handler, "handler-timeout", 0, "answer a call still running after this long with -32002 \"request timed out\" and cancel it (0: 30s on http://, none on streams and ws://; -1s: none)")
	cmd.Flags().DurationVar(&timeouts.body, "body-timeout", 0, "answer an HTTP request whose body has not arrived after this long with 408 (0: 30s; -1s: none)")
	cmd.Flags().StringVar(&sockMode, "socket-mode", "0600", "permissions of unix:// socket files, in octal (e.g. 0660 to let the group connect)")
	cmd.Flags().BoolVar(&mcp, "mcp", false, "serve the demo as an MCP server of both eras: 2025-11-25 (initialize, ping, tools with argument errors as isError results; http:// listeners with sessions) and 2026-07-28 (stateless: server/discover, every request on its own)")
	cmd.Flags().BoolVar(&fixture, "mcp-fixture", false, "serve the MCP conformance suite's fixture surface (its tools, resources and prompts) in both eras, built on package mcp")
	cmd.Flags().StringArrayVar(&stateKeys, "mcp-state-key", nil, "with --mcp: a `HEX` key (16 bytes or more) signing the requestState of multi round-trips, so that every instance behind a load balancer can resume them; repeat to rotate (the first signs, any verifies); default: a random key")
	cmd.Flags().StringVar(&stateURL, "state", "", "keep the demo's shared state in the NATS server at `nats://HOST:PORT` (JetStream): broadcast subscriptions, change feeds, MCP sessions, resumable streams' events and requestState keys are shared by every instance given the same server (docs/deployment.md); serve does not start without it")
	cmd.Flags().DurationVar(&streams.idle, "session-idle-timeout", 0, "with --mcp: end an MCP 2025 session unused for this long (0: 30m); with --state on every instance")
	cmd.Flags().DurationVar(&streams.keepAlive, "sse-keep-alive", 0, "with --mcp: write a keep-alive comment on open event streams this often (0: 15s); with --state also the heartbeat by which another instance following a stream takes its instance for dead after three missed")
	cmd.Flags().BoolVar(&serveExplorer, "explorer", false, "also serve the web explorer at /explorer/ on each http:// listener")
	ownFlagsHelp(cmd, "framing")
	rootCmd.AddCommand(cmd)
}

// loopbackHTTPOnly tells whether listen has http(s):// or ws(s):// URLs and
// all of them are on loopback addresses (localhost, 127.0.0.0/8, ::1).
func loopbackHTTPOnly(listen []string) bool {
	seen := false
	for _, l := range listen {
		u, err := url.Parse(l)
		if err != nil {
			return false
		}
		switch u.Scheme {
		case "http", "https", "ws", "wss":
		default:
			continue
		}
		ip := net.ParseIP(u.Hostname())
		if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return false
		}
		seen = true
	}
	return seen
}

// serving is how serve (and mock) serve: where, how loud, how long a
// shutdown waits for calls in flight, the observability flags and the
// listen options.
type serving struct {
	listen   []string
	verbose  bool
	shutdown time.Duration
	obs      *observeFlags
	opts     []jsonrpc.ListenOption
}

// runServe serves srv on every listen URL until a signal, or until stdio:
// input ends.
func runServe(ctx context.Context, srv *jsonrpc.Server, s serving) error {
	framing, logger, err := s.setUp(srv)
	if err != nil {
		return err
	}
	tel, err := newTelemetry(ctx, s.obs.metrics)
	if err != nil {
		return err
	}
	defer tel.close()
	tel.instrument(srv)

	// Signals: the first SIGINT/SIGTERM shuts down gracefully, a second one
	// exits at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	listeners, err := s.listenAll(srv, framing)
	if err != nil {
		return err
	}
	cause := awaitStop(ctx, logger, sigs, listeners, s.shutdown)
	return shutDown(srv, logger, sigs, s.shutdown, cause)
}

// setUp checks the flags and gives srv its logger.
func (s *serving) setUp(srv *jsonrpc.Server) (jsonrpc.Framing, *slog.Logger, error) {
	if global.exec != "" {
		return 0, nil, usageErrorf("serve does not take --exec")
	}
	framing, err := parseClientFraming(global.framing, true)
	if err != nil {
		return 0, nil, err
	}
	logger, err := s.obs.logger(s.verbose)
	if err != nil {
		return 0, nil, err
	}
	if len(s.listen) == 0 {
		s.listen = defaultListen
	}
	if err := checkDuplicateListeners(s.listen); err != nil {
		return 0, nil, err
	}
	srv.Logger = logger
	if s.verbose {
		srv.Middleware = append(srv.Middleware, jsonrpc.LogCalls(logger, nil))
	}
	return framing, logger, nil
}

// listenAll starts a listener on every URL, or none.
func (s *serving) listenAll(srv *jsonrpc.Server, framing jsonrpc.Framing) ([]*jsonrpc.Listener, error) {
	var listeners []*jsonrpc.Listener
	for _, u := range s.listen {
		l, err := s.listenOn(srv, u, framing)
		if err != nil {
			srv.Shutdown(context.Background())
			return nil, err
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

// listenOn starts one listener and says where it listens.
func (s *serving) listenOn(srv *jsonrpc.Server, u string, framing jsonrpc.Framing) (*jsonrpc.Listener, error) {
	if err := checkListenURL(u); err != nil {
		return nil, err
	}
	lopts := append([]jsonrpc.ListenOption{jsonrpc.ListenFraming(framing)}, s.opts...)
	if serveExplorer {
		lopts = append(lopts, explorerOption(u))
	}
	if strings.HasPrefix(u, "nats://") {
		if pu, err := url.Parse(u); err == nil {
			u = withNATSCreds(pu).String()
		}
	}
	l, err := srv.Listen(u, lopts...)
	if err != nil {
		return nil, &exitError{code: exitTransport, err: fmt.Errorf("cannot listen on %s: %v", u, err), hint: listenHint(u, err)}
	}
	announce(l, s.verbose)
	return l, nil
}

// announce prints where l listens ("listening on URL", on stderr: stdio:
// only when verbose), and the explorer's address beside it.
func announce(l *jsonrpc.Listener, verbose bool) {
	if l.URL != "stdio:" || verbose {
		fmt.Fprintf(os.Stderr, "listening on %s\n", l.URL)
	}
	if serveExplorer && (strings.HasPrefix(l.URL, "http://") || strings.HasPrefix(l.URL, "https://")) {
		if pu, err := url.Parse(l.URL); err == nil {
			fmt.Fprintf(os.Stderr, "explorer on %s://%s/explorer/\n", pu.Scheme, pu.Host)
		}
	}
}

// listenHint says what to do when u cannot be listened on.
func listenHint(u string, err error) string {
	switch {
	case tlsListenHint(u) != "" && strings.Contains(err.Error(), "ListenTLS"):
		return tlsListenHint(u)
	case strings.HasPrefix(u, "nats://"):
		return "start a NATS server (nats-server -a 127.0.0.1) or name one that runs: nats://HOST:4222/SUBJECT"
	case strings.HasPrefix(u, "unix:") && errors.Is(err, syscall.EADDRINUSE):
		return "another server answers on this socket: stop it, or pick another path"
	case strings.HasPrefix(u, "unix:") && errors.Is(err, fs.ErrExist):
		return "the path holds something that is not a socket (left untouched): pick another path"
	case strings.HasPrefix(u, "unix:"):
		return "check that the socket's directory exists and is writable"
	}
	return "pick another address, or port 0 for a free one (e.g. tcp://127.0.0.1:0)"
}

// awaitStop waits for a signal, the end of ctx or a listener stopping,
// and returns why a listener failed (nil for the others, and for the end
// of standard input).
func awaitStop(ctx context.Context, logger *slog.Logger, sigs <-chan os.Signal, listeners []*jsonrpc.Listener, timeout time.Duration) error {
	stopped := make(chan *jsonrpc.Listener, len(listeners))
	for _, l := range listeners {
		go func() { <-l.Done(); stopped <- l }()
	}
	select {
	case s := <-sigs:
		logger.Info("shutting down: finishing calls in flight", "signal", s.String(), "timeout", timeout)
	case l := <-stopped:
		return listenerStopped(logger, l)
	case <-ctx.Done():
	}
	return nil
}

// listenerStopped says why l stopped: nil when standard input ended.
func listenerStopped(logger *slog.Logger, l *jsonrpc.Listener) error {
	if l.URL == "stdio:" && l.Err() == nil {
		logger.Debug("standard input ended; shutting down")
		return nil
	}
	cause := l.Err()
	if cause == nil {
		cause = errors.New("stopped")
	}
	logger.Error("listener failed", "url", l.URL, "err", cause)
	return cause
}

// shutDown finishes the calls in flight (a second signal exits at once)
// and returns the listener failure that ended the serving, if any.
func shutDown(srv *jsonrpc.Server, logger *slog.Logger, sigs <-chan os.Signal, timeout time.Duration, cause error) error {
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-sigs:
			logger.Warn("second signal: exiting now")
			os.Exit(exitInterrupted)
		case <-sctx.Done():
		}
	}()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("shutdown did not finish every call in time", "err", err)
	}
	if cause != nil {
		return transportError(fmt.Errorf("listener stopped: %v", cause), "")
	}
	return nil
}

// parseSocketMode parses --socket-mode, permission bits in octal.
func parseSocketMode(s string) (fs.FileMode, error) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n == 0 || n > 0o777 {
		return 0, usageErrorf("--socket-mode must be octal permissions such as 0600 or 0660, not %q", s)
	}
	return fs.FileMode(n), nil
}

// checkListenURL rejects URLs serve cannot listen on, with a hint.
func checkListenURL(u string) error {
	for _, p := range []string{"http://", "https://", "ws://", "wss://", "tcp://", "tls://", "unix://", "unix:", "stdio:", "nats://"} {
		if strings.HasPrefix(u, p) {
			return nil
		}
	}
	hint := "http://127.0.0.1:8080/, ws://127.0.0.1:8081/, tcp://127.0.0.1:9090, unix:///tmp/jrpc.sock, stdio: or nats://127.0.0.1:4222/SUBJECT"
	return &exitError{code: exitUsage, err: fmt.Errorf("cannot listen on %q", u), hint: hint}
}

// newDemoServer returns a Server for the demo service (rpc.discover
// included), with sh's shared state.
func newDemoServer(sh demo.Shared) *jsonrpc.Server { return &jsonrpc.Server{Handler: sh.NewMux()} }

// serveExplorer is serve's --explorer.
var serveExplorer bool

// explorerOption mounts the web explorer at /explorer/ on an http(s)
// listener, calling the listener's JSON-RPC path.
func explorerOption(listenURL string) jsonrpc.ListenOption {
	path := "/"
	if u, err := url.Parse(listenURL); err == nil && u.Path != "" {
		path = u.Path
	}
	return jsonrpc.ListenHandler("/explorer/", http.StripPrefix("/explorer", explorer.New(explorer.Config{Endpoint: path})))
}

// parseStateKeys decodes --mcp-state-key values.
func parseStateKeys(hexKeys []string) ([][]byte, error) {
	var keys [][]byte
	for _, h := range hexKeys {
		k, err := hex.DecodeString(h)
		if err != nil || len(k) < 16 {
			return nil, fmt.Errorf("--mcp-state-key: want 16 bytes or more in hex (e.g. openssl rand -hex 32)")
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// checkDuplicateListeners refuses a listener given twice (port 0 aside:
// each picks a free port), stdio: included.
func checkDuplicateListeners(listen []string) error {
	seen := map[string]bool{}
	for _, l := range listen {
		key := l
		if u, err := url.Parse(l); err == nil {
			if u.Port() == "0" {
				continue
			}
			key = u.Scheme + "://" + u.Host + u.Opaque + strings.TrimSuffix(u.Path, "/")
		}
		if seen[key] {
			return usageErrorf("--listen %s is given twice: each listener once", l)
		}
		seen[key] = true
	}
	return nil
}
