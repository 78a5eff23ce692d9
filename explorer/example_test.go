package explorer_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/explorer"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// The explorer mounted beside a service on one HTTP server: JSON-RPC at
// /rpc (POST) and /ws (WebSocket, for notifications), the page at
// /explorer/. Nothing is served at /explorer/ unless it is mounted.
func Example() {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	routes := http.NewServeMux()
	routes.Handle("/rpc", srv)
	routes.Handle("/ws", srv.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	routes.Handle("/explorer/", http.StripPrefix("/explorer", explorer.New(explorer.Config{Endpoint: "/rpc", WebSocket: "/ws"})))
	ts := httptest.NewServer(routes)
	defer ts.Close()

	resp, _ := http.Get(ts.URL + "/explorer/config.json")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"), string(b))
	// Output: application/json {"endpoint":"/rpc","websocket":"/ws"}
}
