package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/explorer"
	"github.com/spf13/cobra"
)

func init() {
	var listen string
	explore := &cobra.Command{
		Use:   "explore URL",
		Short: "Serve a web page to browse the target's methods and call them",
		Long: `Serve the web explorer on a local address and print it: a page that lists the
target's methods from rpc.discover, builds a form for each from its param
schemas, sends calls and shows the envelopes, the time taken and the history.

The page talks to this process over a WebSocket, and this process relays each
message to the target, whatever its transport (http, ws, tcp, unix, or a
stdio server with --exec): one connection to the target per open page, so
notifications the target sends are shown as they arrive. Ctrl-C stops it.`,
		Example: `  jrpc explore tcp://127.0.0.1:9090
  jrpc explore --listen 127.0.0.1:8800 http://127.0.0.1:8080/
  jrpc --exec 'jrpc serve --listen stdio:' explore`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplore(cmd.Context(), args, listen)
		},
	}
	explore.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "the `HOST:PORT` to serve the page on (port 0: any free port)")
	rootCmd.AddCommand(explore)
}

func runExplore(ctx context.Context, args []string, listen string) error {
	t, _, err := newTarget(args)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return usageErrorf("--listen %s: %v", listen, err)
	}
	name := t.String()
	if t.command != nil {
		name = "--exec " + global.exec
	}
	routes := http.NewServeMux()
	routes.Handle("/", explorer.New(explorer.Config{WebSocket: "rpc", Target: name}))
	routes.Handle("/rpc", &relay{t: t, loopback: isLoopback(ln.Addr())})
	srv := &http.Server{Handler: routes, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("explorer listening on http://%s/ (relaying to %s)\n", ln.Addr(), name)
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
	if rl.loopback {
		host, _, err := net.SplitHostPort(r.Host)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			http.Error(w, "jrpc explore: Host "+r.Host+" is not a loopback address", http.StatusForbidden)
			return
		}
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
		}()
	}
	for {
		_, msg, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if err := up.Send(ctx, msg); err != nil {
			ws.Close(websocket.StatusInternalError, truncateReason("sending to the target: "+err.Error()))
			return
		}
		if !rl.t.isHTTP() {
			continue
		}
		for { // over HTTP, the replies to what was just sent
			reply, err := up.Recv(ctx)
			if errors.Is(err, errNoMore) {
				break
			}
			if err != nil || ws.Write(ctx, websocket.MessageText, reply) != nil {
				return
			}
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
