package jsonrpc_test

import (
	"bufio"
	"io"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// A subscriptions/listen over a stream (stdio: the MCP client closes the
// server's input to shut it down) ends gracefully once the peer finished
// sending: the listen is answered and the connection ends, as it does for
// any other call already read. (It used to wait for the listen forever, so
// a stdio server never exited on its own.)
func TestChangeFeedListenEndsWhenPeerFinishes(t *testing.T) {
	mux := jsonrpc.NewMux()
	mux.Handle("subscriptions/listen", &jsonrpc.ChangeFeed{})
	srv := &jsonrpc.Server{Handler: mux, Convention: jsonrpc.ConventionMCP}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := jsonrpc.NewConn(jsonrpc.NewStream(struct {
		io.Reader
		io.Writer
		io.Closer
	}{inR, outW, inR}, jsonrpc.StreamOptions{}), srv)
	defer c.Close()
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{`+meta2026+`,"notifications":{"toolsListChanged":true}}}`+"\n")
		inW.Close() // the peer finished sending
	}()
	lines := make(chan string, 4)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"notifications":{"toolsListChanged":true}}}`,
		`{"jsonrpc":"2.0","id":"L","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`,
	}
	for _, w := range want {
		select {
		case got := <-lines:
			if got != w {
				t.Fatalf("got %s\nwant %s", got, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the listen was not answered after the peer finished sending; want %s", w)
		}
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the connection did not end")
	}
	outW.Close()
	for s := range lines {
		t.Errorf("more output: %s", s)
	}
}
