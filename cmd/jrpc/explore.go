package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/explorer"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/spf13/cobra"
)

func init() {
	var listen, schema string
	explore := &cobra.Command{
		Use:   "explore URL",
		Short: "Serve a web page to browse the target's methods and call them",
		Long: `Serve the web explorer on a local address and print it: a page that lists the
target's methods from rpc.discover, builds a form for each from its param
schemas, sends calls and shows the envelopes, the time taken and the history.
The form and the params' JSON box follow each other both ways.

A target without rpc.discover (geth, most MCP servers) is explored too: the
page says why the methods cannot be listed and calls any method typed by name,
its params written as JSON; --schema loads an OpenRPC document (a file or an
http(s) URL) to list the methods instead of asking rpc.discover. When the
target cannot be reached, the page says why.

The page talks to this process over a WebSocket, and this process relays each
message to the target, whatever its transport (http, ws, tcp, unix, or a
stdio server with --exec): one connection to the target per open page, so
notifications the target sends are shown as they arrive. Ctrl-C stops it.`,
		Example: `  jrpc explore tcp://127.0.0.1:9090
  jrpc explore --listen http://127.0.0.1:8800/ http://127.0.0.1:8080/
  jrpc explore --schema api.json ws://127.0.0.1:8546/
  jrpc --exec 'jrpc serve --listen stdio:' explore`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplore(cmd.Context(), args, listen, schema)
		},
	}
	explore.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "where to serve the page: `http://HOST:PORT/[PATH/]` or HOST:PORT (port 0: any free port)")
	explore.Flags().StringVar(&schema, "schema", "", "an OpenRPC document (`FILE` or http(s) URL) listing the target's methods, for a target without rpc.discover")
	rootCmd.AddCommand(explore)
}

func runExplore(ctx context.Context, args []string, listen, schema string) error {
	t, _, err := newTarget(args)
	if err != nil {
		return err
	}
	addr, prefix, err := exploreListen(listen)
	if err != nil {
		return err
	}
	var doc []byte
	if schema != "" {
		if doc, err = loadSchema(ctx, schema); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErrorf("--listen %s: %v", listen, err)
	}
	name := t.String()
	if t.command != nil {
		name = "--exec " + global.exec
	}
	routes := http.NewServeMux()
	routes.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), explorer.New(explorer.Config{WebSocket: "rpc", Target: name, Document: doc, JRPC: t.jrpcCommand(), HTTPURL: t.httpURL()})))
	routes.Handle(prefix+"rpc", &relay{t: t, loopback: isLoopback(ln.Addr())})
	srv := &http.Server{Handler: routes, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("explorer listening on http://%s%s (relaying to %s)\n", ln.Addr(), prefix, name)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// exploreListen parses --listen: http://HOST:PORT/ with an optional path
// the page is served under, as every other command takes an address, or
// HOST:PORT.
func exploreListen(s string) (addr, prefix string, err error) {
	if !strings.Contains(s, "://") {
		return s, "/", nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", &exitError{code: exitUsage, err: fmt.Errorf("--listen %s: the explorer is served over plain HTTP", s), hint: "--listen http://127.0.0.1:8800/ (or 127.0.0.1:8800)"}
	}
	prefix = u.Path
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// maxSchemaSize bounds an OpenRPC document read by --schema.
const maxSchemaSize = 16 << 20

// loadSchema reads --schema, an OpenRPC document in a file or at an
// http(s) URL, and checks that it is one.
func loadSchema(ctx context.Context, src string) ([]byte, error) {
	raw, err := readSchema(ctx, src)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("--schema: cannot read the OpenRPC document: %w", err)}
	}
	if err := checkJSON(raw, src); err != nil {
		return nil, err
	}
	if _, err := openrpc.ParseDocument(raw); err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("--schema: %s is not an OpenRPC document: %w", src, err), hint: "jrpc discover URL > api.json writes one from a server that has rpc.discover"}
	}
	return raw, nil
}

func readSchema(ctx context.Context, src string) ([]byte, error) {
	if !strings.HasPrefix(src, "http://") && !strings.HasPrefix(src, "https://") {
		f, err := os.Open(src)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readBounded(f, src)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", src, resp.Status)
	}
	return readBounded(resp.Body, src)
}

// readBounded reads r whole, up to maxSchemaSize.
func readBounded(r io.Reader, name string) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSchemaSize+1))
	if err == nil && len(raw) > maxSchemaSize {
		err = fmt.Errorf("%s is larger than %d MiB", name, maxSchemaSize>>20)
	}
	return raw, err
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// relay pipes the messages of one page's WebSocket to a connection of its
// own to the target, and the target's messages back.
type relay struct {
	t        *target
	loopback bool
}

func (rl *relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A page on another site must not drive the relay: the WebSocket
	// library refuses cross-origin handshakes, and on a loopback address
	// the Host must be a loopback name too (DNS rebinding).
	if rl.loopback && !loopbackHost(r.Host) {
		http.Error(w, "jrpc explore: Host "+r.Host+" is not a loopback address", http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(jsonrpc.DefaultMaxMessageSize)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	up, err := rl.t.dialRaw(ctx, false)
	if err != nil {
		ws.Close(websocket.StatusInternalError, truncateReason("cannot reach the target: "+err.Error()))
		return
	}
	defer up.Close()
	if !rl.t.isHTTP() {
		go func() { // the target's messages, as they come
			defer cancel()
			relayDown(ctx, up, ws)
		}()
	}
	rl.relayUp(ctx, up, ws)
}

// relayUp passes the page's messages to the target (over HTTP, with the
// replies back) until either ends.
func (rl *relay) relayUp(ctx context.Context, up rawConn, ws *websocket.Conn) {
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if err := up.Send(ctx, msg); err != nil {
			ws.Close(websocket.StatusInternalError, truncateReason("sending to the target: "+err.Error()))
			return
		}
		if rl.t.isHTTP() && !relayReplies(ctx, up, ws) {
			return
		}
	}
}

// loopbackHost tells whether a request's Host is a loopback name.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// relayDown passes the target's messages to the page until either ends.
func relayDown(ctx context.Context, up rawConn, ws *websocket.Conn) {
	for {
		msg, err := up.Recv(ctx)
		if err != nil {
			if ctx.Err() == nil { // not the page leaving
				ws.Close(websocket.StatusGoingAway, truncateReason("the target closed: "+err.Error()))
			}
			return
		}
		if ws.Write(ctx, websocket.MessageText, msg) != nil {
			return
		}
	}
}

// relayReplies passes the replies to what was just sent over HTTP; it
// reports whether the relay goes on.
func relayReplies(ctx context.Context, up rawConn, ws *websocket.Conn) bool {
	for {
		reply, err := up.Recv(ctx)
		if errors.Is(err, errNoMore) {
			return true
		}
		if err != nil || ws.Write(ctx, websocket.MessageText, reply) != nil {
			return false
		}
	}
}

// truncateReason fits a close reason in a WebSocket control frame.
func truncateReason(s string) string {
	if len(s) > 120 {
		s = s[:120]
	}
	fmt.Fprintln(os.Stderr, "jrpc explore:", s)
	return s
}

// jrpcCommand is the start of a jrpc command line that reaches t, with
// {command} where the command name goes: the explorer's "copy as jrpc".
func (t *target) jrpcCommand() string {
	line := "jrpc"
	if global.framing != "" {
		line += " --framing " + global.framing
	}
	if t.command != nil {
		return line + " --exec " + shellQuote(global.exec) + " {command}"
	}
	return line + " {command} " + shellQuote(t.raw)
}

// httpURL is t's URL when it answers HTTP POSTs (the explorer's "copy as
// curl"), else "".
func (t *target) httpURL() string {
	if !t.isHTTP() || global.streamable {
		return ""
	}
	return t.url.String()
}
