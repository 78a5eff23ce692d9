package gen_test

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/seedhq/jsonrpc/openrpc/gen"
)

// demoDocument serves the demo service over HTTP and returns its URL and
// its OpenRPC document.
func demoDocument(t *testing.T) (string, string, []byte) {
	t.Helper()
	mux := demo.Shared{}.NewMux()
	server := &jsonrpc.Server{Handler: mux}
	srv := httptest.NewServer(server)
	t.Cleanup(srv.Close)
	ws := httptest.NewServer(server.WebSocketHandler(jsonrpc.WebSocketOptions{}))
	t.Cleanup(ws.Close)
	d, err := openrpc.Document(mux, demo.Info)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, "ws" + strings.TrimPrefix(ws.URL, "http"), doc
}

// TestRoundTripDemo generates Go from the demo's document, implements the
// generated Service in a test (testdata/roundtrip), serves it, and calls
// both it and the demo itself through the generated Client: the results
// are equal, and an error response is a *jsonrpc.Error; the generated
// SubscribeTicker (from the document's x-subscription) gets the demo's
// ticker events over WebSocket.
func TestRoundTripDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	url, wsURL, doc := demoDocument(t)
	src, err := gen.Go(doc, gen.Options{Package: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	dir := goModule(t)
	write(t, filepath.Join(dir, "demo", "demo.go"), src)
	test, err := os.ReadFile(filepath.Join("testdata", "roundtrip", "demo_test.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "demo", "demo_test.go"), test)
	cmd := exec.Command("go", "test", "-count=1", "./demo")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "DEMO_URL="+url, "DEMO_WS="+wsURL)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go test in the generated module: %v\n%s", err, out)
	}
}
