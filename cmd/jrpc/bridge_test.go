package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/seedhq/jsonrpc"
)

// A test binary started with JRPC_TEST_CALLBACK_SERVER=1 is a stdio server
// whose method "ask" calls the client's "client_echo" and returns its answer.
func init() {
	if os.Getenv("JRPC_TEST_CALLBACK_SERVER") != "1" {
		return
	}
	srv := &jsonrpc.Server{Handler: callbackMux()}
	err := srv.ServeConn(context.Background(), jsonrpc.NewStream(&pipeRWC{r: os.Stdin, w: os.Stdout}, jsonrpc.StreamOptions{}))
	if err != nil && err != io.EOF {
		os.Exit(1)
	}
	os.Exit(0)
}

func callbackMux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "ask", func(ctx context.Context, p json.RawMessage) (json.RawMessage, error) {
		var out json.RawMessage
		err := jsonrpc.ConnFromContext(ctx).Call(ctx, "client_echo", p, &out)
		return out, err
	})
	return mux
}

// clientServer serves client_echo: what a client answers the server's calls with.
func clientHandler() jsonrpc.Handler {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "client_echo", func(ctx context.Context, p json.RawMessage) (json.RawMessage, error) {
		return p, nil
	})
	return mux
}

// startBridge runs jrpc bridge with args and returns the URL it listens on.
func startBridge(t *testing.T, env []string, args ...string) string {
	t.Helper()
	u, _ := startListening(t, env, append([]string{"bridge"}, args...)...)
	return u
}

// lineConn opens a TCP connection to addr, for newline-delimited messages.
func lineConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(addr, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

func TestBridgeMessagesPassUntouched(t *testing.T) {
	// WebSocket in front of a stdio server, one subprocess per connection.
	ws := startBridge(t, nil, "--listen", "ws://127.0.0.1:0/", "--exec", execCmd)
	expect(t, run(t, "", "call", ws, "subtract", "[42,23]"), 0, "19\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for req, want := range map[string]string{
		`{"jsonrpc":"2.0","id":18446744073709551616,"method":"echo","params":{"z":1,"a":[true,1.50]}}`: `{"jsonrpc":"2.0","id":18446744073709551616,"result":{"z":1,"a":[true,1.50]}}`,
		`{"method":"sum","params":[1,2],"id":"x","jsonrpc":"2.0"}`:                                     `{"jsonrpc":"2.0","id":"x","result":3}`,
		`[{"jsonrpc":"2.0","id":1.0,"method":"get_data"},{"jsonrpc":"2.0","method":"update"}]`:         `[{"jsonrpc":"2.0","id":1.0,"result":["hello",5]}]`,
	} {
		c.Write(ctx, websocket.MessageText, []byte(req))
		_, got, err := c.Read(ctx)
		if err != nil || string(got) != want {
			t.Fatalf("%s: got %s (%v), want %s", req, got, err, want)
		}
	}

	// TCP, one shared subprocess: two clients use the same id at once and
	// each gets its own answer, with its own id.
	tcp := startBridge(t, nil, "--listen", "tcp://127.0.0.1:0", "--shared", "--exec", execCmd)
	a, ra := lineConn(t, tcp)
	b, rb := lineConn(t, tcp)
	io.WriteString(a, `{"jsonrpc":"2.0","id":7,"method":"sleep","params":{"ms":300}}`+"\n")
	io.WriteString(b, `{"jsonrpc":"2.0","id":7,"method":"sleep","params":{"ms":100}}`+"\n")
	if got, _ := rb.ReadString('\n'); got != `{"jsonrpc":"2.0","id":7,"result":100}`+"\n" {
		t.Fatalf("b got %q", got)
	}
	if got, _ := ra.ReadString('\n'); got != `{"jsonrpc":"2.0","id":7,"result":300}`+"\n" {
		t.Fatalf("a got %q", got)
	}

	// HTTP in front of TCP: each POST is forwarded, the answer comes back
	// with its id; notifications get 202.
	hu := startBridge(t, nil, "--listen", "http://127.0.0.1:0/rpc", urls["tcp"])
	post := func(body string) (int, string) {
		resp, err := http.Post(hu, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, got := post(`{"jsonrpc":"2.0","id":"q","method":"subtract","params":[5,3]}`); code != 200 || got != `{"jsonrpc":"2.0","id":"q","result":2}` {
		t.Fatalf("POST: %d %s", code, got)
	}
	if code, got := post(`[{"jsonrpc":"2.0","id":2,"method":"sum","params":[1]},{"jsonrpc":"2.0","method":"update"}]`); code != 200 || got != `[{"jsonrpc":"2.0","id":2,"result":1}]` {
		t.Fatalf("POST batch: %d %s", code, got)
	}
	if code, got := post(`[1,2]`); code != 200 || strings.Count(got, `"id":null,"error":{"code":-32600`) != 2 {
		t.Fatalf("POST invalid batch: %d %s", code, got)
	}
	if code, got := post(`{"jsonrpc":"2.0",`); code != 200 || !strings.Contains(got, `"code":-32700`) {
		t.Fatalf("POST invalid JSON: %d %s", code, got)
	}
	if code, got := post(`{"jsonrpc":"2.0","method":"update"}`); code != http.StatusAccepted || got != "" {
		t.Fatalf("POST notification: %d %q", code, got)
	}
	expect(t, run(t, "", "call", hu, "get_data"), 0, `["hello",5]`+"\n")
}

func TestBridgeServerCallsClientBothWays(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ask := func(t *testing.T, c *jsonrpc.Conn) {
		t.Helper()
		var got json.RawMessage
		if err := c.Call(ctx, "ask", map[string]any{"q": "who?"}, &got); err != nil || string(got) != `{"q":"who?"}` {
			t.Fatalf("ask: %s, %v", got, err)
		}
	}

	// A stdio server behind a TCP listener calls its client back.
	t.Run("tcp to exec", func(t *testing.T) {
		tcp := startBridge(t, []string{"JRPC_TEST_CALLBACK_SERVER=1"}, "--listen", "tcp://127.0.0.1:0", "--exec", self)
		c, err := jsonrpc.Dial(ctx, tcp, jsonrpc.WithHandler(clientHandler()))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ask(t, c.(*jsonrpc.Conn))
	})

	// The reverse: a program speaking stdio reaches a TCP server that calls
	// it back, through the bridge's standard input and output.
	t.Run("stdio to tcp", func(t *testing.T) {
		srv := &jsonrpc.Server{Handler: callbackMux()}
		l, err := srv.Listen("tcp://127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Shutdown(context.Background())
		cmd := exec.Command(bin, "bridge", "--listen", "stdio:", l.URL)
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := jsonrpc.NewConn(jsonrpc.NewStream(&pipeRWC{r: out, w: in}, jsonrpc.StreamOptions{}), &jsonrpc.Server{Handler: clientHandler()})
		ask(t, c)
		// The client leaving ends the bridge.
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("bridge exited with %v: %s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the bridge did not exit when its standard input ended")
		}
	})
}

func TestBridgeEndsPropagate(t *testing.T) {
	// The subprocess's exit ends a stdio bridge, with its exit code.
	r := run(t, "", "bridge", "--listen", "stdio:", "--exec", "sh -c 'exit 7'")
	if r.code != 7 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// A departing client stops its subprocess; a subprocess that exits
	// closes its client's connection.
	tcp := startBridge(t, nil, "--listen", "tcp://127.0.0.1:0", "--exec", "sh -c 'read line; exit 0'")
	c, rd := lineConn(t, tcp)
	io.WriteString(c, "{}\n")
	if _, err := rd.ReadString('\n'); err != io.EOF {
		t.Fatalf("the client's connection stayed open after its subprocess exited: %v", err)
	}
	// The target closing ends a stdio bridge too.
	srvURL, srv := startServer(t, "127.0.0.1:0")
	cmd := exec.Command(bin, "bridge", "--listen", "stdio:", srvURL)
	in, _ := cmd.StdinPipe()
	var out syncBuffer
	cmd.Stdout = &out
	cmd.Start()
	defer in.Close()
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"get_data"}`+"\n")
	waitBuf(t, &out, `"result":["hello",5]`)
	srv.Process.Kill()
	var wg sync.WaitGroup
	wg.Add(1)
	exited := make(chan struct{})
	go func() { defer wg.Done(); cmd.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the bridge did not exit when its target went away")
	}
	wg.Wait()
	// Usage: --listen is required.
	expect(t, run(t, "", "bridge", urls["tcp"]), exitUsage, "")
}

func TestBridgeLimitsAndDepartingClient(t *testing.T) {
	// A message over the size limit gets -32600; the connection goes on.
	tcp := startBridge(t, nil, "--listen", "tcp://127.0.0.1:0", "--exec", execCmd)
	c, rd := lineConn(t, tcp)
	big := `{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("x", jsonrpc.DefaultMaxMessageSize) + `"]}`
	go io.WriteString(c, big+"\n"+`{"jsonrpc":"2.0","id":2,"method":"get_data"}`+"\n")
	if got, _ := rd.ReadString('\n'); !strings.Contains(got, `"id":null,"error":{"code":-32600`) {
		t.Fatalf("oversize message answered %.200q", got)
	}
	if got, _ := rd.ReadString('\n'); got != `{"jsonrpc":"2.0","id":2,"result":["hello",5]}`+"\n" {
		t.Fatalf("after it: %q", got)
	}

	// A client that leaves stops its subprocess.
	pidFile := filepath.Join(t.TempDir(), "pid")
	tcp = startBridge(t, nil, "--listen", "tcp://127.0.0.1:0", "--exec", "sh -c 'echo $$ > "+pidFile+"; exec cat'")
	c, _ = lineConn(t, tcp)
	io.WriteString(c, "{}\n")
	var pid int
	waitUntil(t, func() bool {
		b, err := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	c.Close()
	waitUntil(t, func() bool { return syscall.Kill(pid, 0) != nil })
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBridgeSharedCallbackAndReplayNotifications(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// --shared: the target's call to its client reaches the client that can take it.
	tcp := startBridge(t, []string{"JRPC_TEST_CALLBACK_SERVER=1"}, "--listen", "tcp://127.0.0.1:0", "--shared", "--exec", self)
	c, err := jsonrpc.Dial(ctx, tcp, jsonrpc.WithHandler(clientHandler()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got json.RawMessage
	if err := c.Call(ctx, "ask", []int{4, 2}, &got); err != nil || string(got) != `[4,2]` {
		t.Fatalf("ask: %s, %v", got, err)
	}

	// replay sends the server's notifications that followed an answer.
	file := filepath.Join(t.TempDir(), "rec.jsonl")
	os.WriteFile(file, []byte(`{"time":"2026-12-01T09:30:00Z","conn":1,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"demo_subscribe","params":["ticker"]}}
{"time":"2026-12-01T09:30:00.1Z","conn":1,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":"0x1"}}
{"time":"2026-12-01T09:30:00.2Z","conn":1,"from":"server","message":{"jsonrpc":"2.0","method":"demo_subscription","params":{"subscription":"0x1","result":1}}}
{"time":"2026-12-01T09:30:00.3Z","conn":1,"from":"server","message":{"jsonrpc":"2.0","method":"demo_subscription","params":{"subscription":"0x1","result":2}}}
`), 0o600)
	rp, _ := startListening(t, nil, "replay", file, "--listen", "tcp://127.0.0.1:0")
	lc, rd := lineConn(t, rp)
	io.WriteString(lc, `{"jsonrpc":"2.0","id":9,"method":"demo_subscribe","params":["ticker"]}`+"\n")
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":9,"result":"0x1"}`,
		`{"jsonrpc":"2.0","method":"demo_subscription","params":{"subscription":"0x1","result":1}}`,
		`{"jsonrpc":"2.0","method":"demo_subscription","params":{"subscription":"0x1","result":2}}`,
	} {
		if got, _ := rd.ReadString('\n'); got != want+"\n" {
			t.Fatalf("got %q, want %s", got, want)
		}
	}
}
