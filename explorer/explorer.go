// Package explorer serves a web page for exploring a JSON-RPC service: it
// lists the methods of the service's rpc.discover document (params, result,
// errors, examples, deprecation), builds a form from each method's param
// schemas, sends the call, and shows the request and response envelopes,
// the time taken and a history of the calls, any of which it copies as a
// curl or a jrpc command line that sends the same request; over WebSocket,
// notifications from the server are shown as they arrive.
//
// A service without rpc.discover is explored too: the page takes any
// method name and params written as JSON, or lists the methods of an
// OpenRPC document given in Config.Document. Why the service cannot be
// reached, or cannot describe itself, is shown on the page.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary: it
// loads nothing from the network but its own files and the service's
// answers. Mount it beside a server (it is off unless mounted):
//
//	routes := http.NewServeMux()
//	routes.Handle("/", srv) // JSON-RPC over HTTP POST
//	routes.Handle("/explorer/", http.StripPrefix("/explorer", explorer.New(explorer.Config{Endpoint: "/"})))
//
// The page calls Endpoint (HTTP POST) or, when set, WebSocket; both may be
// relative to the page, or absolute URLs of another origin, which must then
// allow the page's origin (jsonrpc.Server.AllowedOrigins). `jrpc explore
// URL` serves the page for any target the CLI reaches (tcp, unix, stdio
// too), relaying the page's calls.
package explorer

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Config says where the page sends its calls.
type Config struct {
	// Endpoint is the URL that JSON-RPC messages are POSTed to, relative
	// to the page or absolute; "" is the page's own directory.
	Endpoint string `json:"endpoint"`
	// WebSocket, when set, is the URL of a JSON-RPC WebSocket endpoint
	// (ws://, wss://, or relative to the page): the page then sends its
	// calls over it and shows the notifications the server sends.
	WebSocket string `json:"websocket,omitzero"`
	// Target names the service in the page's header (for instance the URL
	// that jrpc explore relays to); "" shows the endpoint.
	Target string `json:"target,omitzero"`
	// JRPC is the start of a jrpc command line that reaches the service,
	// for the page's "copy as jrpc": "{command}" stands where the command
	// name goes (jrpc {command} tcp://127.0.0.1:9090, jrpc --exec 'CMD'
	// {command}). "" makes it from the URL the page calls.
	JRPC string `json:"jrpc,omitzero"`
	// HTTPURL is the URL the service answers HTTP POSTs at, for the page's
	// "copy as curl"; "" is Endpoint when the page calls over HTTP (with
	// WebSocket alone, the page offers no curl command).
	HTTPURL string `json:"httpURL,omitzero"`
	// Document, when set, is the service's OpenRPC document (what
	// rpc.discover would answer): the page lists its methods and does not
	// call rpc.discover, for services that do not serve it. It must be
	// valid JSON; if not, the page says so.
	Document json.RawMessage `json:"document,omitzero"`
}

// New returns the handler that serves the page: index.html at "/", its
// scripts and styles, and config.json (cfg). Mount it under a prefix with
// http.StripPrefix.
func New(cfg Config) http.Handler {
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err)
	}
	files := http.FileServerFS(static)
	conf, confErr := json.Marshal(cfg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "explorer: method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		// The page runs its own script only, and talks to the service.
		h.Set("Content-Security-Policy", "default-src 'self'; connect-src 'self' http: https: ws: wss:; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		switch p := strings.TrimPrefix(r.URL.Path, "/"); p {
		case "config.json":
			if confErr != nil {
				http.Error(w, "explorer: the configuration cannot be encoded: "+confErr.Error(), http.StatusInternalServerError)
				return
			}
			h.Set("Content-Type", "application/json")
			w.Write(conf)
			return
		case "", "index.html", "app.js", "style.css":
		default:
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}
