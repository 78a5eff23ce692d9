package jsonrpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// The stdio tests run this test binary itself as the subprocess: with
// stdioModeEnv set, TestStdioHelperProcess becomes a JSON-RPC server on
// its standard input and output (Server.Listen("stdio:")) and exits when
// its input ends.
const stdioModeEnv = "JSONRPC_TEST_STDIO_SERVER"

func TestStdioHelperProcess(t *testing.T) {
	mode := os.Getenv(stdioModeEnv)
	if mode == "" {
		t.Skip("helper process for the stdio tests")
	}
	os.Exit(runStdioServer(mode))
}

func runStdioServer(mode string) int {
	// Logs go to standard error, never to standard output.
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	mux := demo.Shared{}.NewMux()
	registerStreamMethods(mux)
	jsonrpc.Register(mux, "greet", func(ctx context.Context, _ struct{}) (string, error) {
		var name string
		if err := jsonrpc.ConnFromContext(ctx).Call(ctx, "client.name", nil, &name); err != nil {
			return "", err
		}
		return "hello, " + name, nil
	})
	srv := &jsonrpc.Server{Handler: mux, Logger: logger}
	var opts []jsonrpc.ListenOption
	switch mode {
	case "conformance":
		srv.MaxConcurrency = 1 // replies in order, for the sentinel
	case "lsp":
		opts = append(opts, jsonrpc.ListenFraming(jsonrpc.FramingHeader))
	case "line":
		opts = append(opts, jsonrpc.ListenFraming(jsonrpc.FramingLine))
	case "guarded":
		srv.MaxConcurrency = 1
		setGuards(srv)
	case "exit3":
		fmt.Fprintln(os.Stderr, "exiting with status 3")
		return 3
	case "banner": // a line on stdout before speaking JSON-RPC (npm run does so)
		fmt.Println("> server@1.0.0 start")
	case "hello": // not a JSON-RPC server at all
		fmt.Println("hello")
		return 0
	case "deaf":
		// Ignores the end of its input: only a kill stops it.
		fmt.Fprintln(os.Stderr, "deaf helper started")
		select {}
	}
	logger.Info("serving on stdio", "mode", mode)
	l, err := srv.Listen("stdio:", opts...)
	if err != nil {
		logger.Error("listen", "error", err)
		return 1
	}
	<-l.Done()
	if err := l.Err(); err != nil {
		logger.Error("stdio ended", "error", err)
		return 1
	}
	logger.Info("stdin closed; all requests answered")
	return 0
}

// helperCommand returns the command line that runs the helper process in
// mode: the mode goes in the environment, which the child inherits.
func helperCommand(t *testing.T, mode string) (string, []string) {
	t.Setenv(stdioModeEnv, mode)
	// Under the race detector a process sleeps a second at exit: not ours.
	t.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return os.Args[0], []string{"-test.run=^TestStdioHelperProcess$"}
}

// pipeConn is a subprocess's stdin and stdout as a net.Conn, for streamRoundTrip.
type pipeConn struct {
	w *os.File // the child's stdin
	r *os.File // the child's stdout
}

func (p pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p pipeConn) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p pipeConn) Close() error                { p.w.Close(); return p.r.Close() }
func (pipeConn) LocalAddr() net.Addr           { return stdioAddr{} }
func (pipeConn) RemoteAddr() net.Addr          { return stdioAddr{} }
func (p pipeConn) SetDeadline(t time.Time) error {
	return errors.Join(p.r.SetDeadline(t), p.w.SetDeadline(t))
}
func (p pipeConn) SetReadDeadline(t time.Time) error  { return p.r.SetReadDeadline(t) }
func (p pipeConn) SetWriteDeadline(t time.Time) error { return p.w.SetWriteDeadline(t) }

type stdioAddr struct{}

func (stdioAddr) Network() string { return "stdio" }
func (stdioAddr) String() string  { return "stdio" }

// startHelper runs the helper in mode with raw pipes.
func startHelper(t *testing.T, mode string, stderr io.Writer) (*exec.Cmd, pipeConn) {
	t.Helper()
	name, args := helperCommand(t, mode)
	cmd := exec.Command(name, args...)
	cmd.Stderr = stderr
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, pipeConn{w: inW, r: outR}
}

func TestConformanceStdio(t *testing.T) {
	_, pc := startHelper(t, "conformance", io.Discard)
	checkVectors(t, streamRoundTrip(pc))
}

// syncBuffer is a bytes.Buffer safe for the writes of exec's stderr copier.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStdioEOFAnswersInFlight(t *testing.T) {
	stderr := &syncBuffer{}
	cmd, pc := startHelper(t, "plain", stderr)
	// Two slow calls and a notification, then the end of input at once.
	_, err := io.WriteString(pc.w, `{"jsonrpc":"2.0","method":"sleep","params":{"ms":300},"id":1}`+"\n"+
		`{"jsonrpc":"2.0","method":"update","params":[1]}`+"\n"+
		`[{"jsonrpc":"2.0","method":"sleep","params":{"ms":200},"id":"b"},{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":"c"}]`+"\n")
	if err != nil {
		t.Fatal(err)
	}
	pc.w.Close()
	pc.r.SetReadDeadline(time.Now().Add(10 * time.Second))
	out, err := io.ReadAll(pc.r) // up to the server's exit
	if err != nil {
		t.Fatalf("%v (read %q)", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 replies, got %q", out)
	}
	got := strings.Join(lines, "|")
	if !strings.Contains(got, `{"jsonrpc":"2.0","id":1,"result":300}`) ||
		!strings.Contains(got, `{"jsonrpc":"2.0","id":"b","result":200}`) ||
		!strings.Contains(got, `{"jsonrpc":"2.0","id":"c","result":3}`) {
		t.Fatalf("replies %q", out)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stderr.String(), "all requests answered") {
		t.Fatalf("stderr:\n%s", stderr)
	}
}

func TestDialCommand(t *testing.T) {
	noLeaks(t)
	stderr := &syncBuffer{}
	name, args := helperCommand(t, "plain")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := jsonrpc.DialCommand(ctx, name, args, jsonrpc.WithStderr(stderr))
	if err != nil {
		t.Fatal(err)
	}
	var diff float64
	if err := conn.Call(ctx, "subtract", []int{42, 23}, &diff); err != nil || diff != 19 {
		t.Fatalf("subtract: %v %v", diff, err)
	}
	if err := conn.Notify(ctx, "update", nil); err != nil {
		t.Fatal(err)
	}
	var b jsonrpc.Batch
	var sum float64
	c1 := b.Call("sum", []int{1, 2}, &sum)
	c2 := b.Call("nope", nil, nil)
	if err := conn.Batch(ctx, &b); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || sum != 3 || !errors.Is(c2.Err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("batch: %v %v %v", c1.Err, sum, c2.Err)
	}
	// The server calls back during a request: the client has no handler,
	// so the callback gets -32601 and the server's handler returns it.
	if err := conn.Call(ctx, "greet", nil, nil); !errors.Is(err, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound}) {
		t.Fatalf("greet without a client server: %v", err)
	}
	start := time.Now()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Close took %v: the server should exit at the end of its input", d)
	}
	// The command's stderr was forwarded, up to its last words.
	if s := stderr.String(); !strings.Contains(s, "serving on stdio") || !strings.Contains(s, "all requests answered") {
		t.Fatalf("stderr:\n%s", s)
	}
	if err := conn.Call(ctx, "sum", []int{1}, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestDialCommandBidirectionalLSP(t *testing.T) {
	noLeaks(t)
	clientMux := jsonrpc.NewMux()
	jsonrpc.Register(clientMux, "client.name", func(context.Context, struct{}) (string, error) { return "ada", nil })
	name, args := helperCommand(t, "lsp")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := jsonrpc.DialCommand(ctx, name, args, jsonrpc.WithFraming(jsonrpc.FramingHeader),
		jsonrpc.WithHandler(clientMux), jsonrpc.WithStderr(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var got string
			if err := conn.Call(ctx, "greet", nil, &got); err != nil || got != "hello, ada" {
				t.Errorf("greet: %q %v", got, err)
			}
		})
	}
	wg.Wait()
}

func TestDialCommandExitStatus(t *testing.T) {
	noLeaks(t)
	name, args := helperCommand(t, "exit3")
	conn, err := jsonrpc.DialCommand(context.Background(), name, args, jsonrpc.WithStderr(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The call fails once the command has gone, and says why.
	err = conn.Call(ctx, "sum", []int{1}, nil)
	if err == nil {
		t.Fatal("a call to an exited command succeeded")
	}
	select {
	case <-conn.Done():
	case <-ctx.Done():
		t.Fatal("the connection did not end with the command")
	}
	var ee *exec.ExitError
	if err := conn.Err(); !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Err: %v", err)
	}
}

// A command that exits before or while a request is written fails the
// call with an error matching ErrClosed, whichever comes first: the
// connection ending, the write meeting the closed pipe (EPIPE) or the pipe
// the reaper closed (os.ErrClosed), both of them wrapped, and the exit
// status when it failed.
func TestDialCommandExitedIsErrClosed(t *testing.T) {
	noLeaks(t)
	for _, name := range []string{"true", "false"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skip(err)
		}
	}
	seen := map[string]int{}
	for i := range 200 {
		name := []string{"true", "false"}[i%2]
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		conn, err := jsonrpc.DialCommand(ctx, name, nil, jsonrpc.WithStderr(io.Discard))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%7) * time.Millisecond / 2) // exits before, while or after the write
		err = conn.Call(ctx, "sum", []int{1}, nil)
		conn.Close()
		cancel()
		wrote := strings.Contains(fmt.Sprint(err), "write")
		var exitErr *exec.ExitError
		if !errors.Is(err, jsonrpc.ErrClosed) || wrote && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, os.ErrClosed) ||
			name == "false" && !errors.As(err, &exitErr) { // and it says why
			t.Fatalf("call to %s that exited: %v", name, err)
		}
		seen[fmt.Sprintf("write failed: %v", wrote)]++
	}
	t.Log(seen)
}

func TestDialCommandKillsAfterGrace(t *testing.T) {
	noLeaks(t)
	stderr := &syncBuffer{}
	name, args := helperCommand(t, "deaf")
	conn, err := jsonrpc.DialCommand(context.Background(), name, args,
		jsonrpc.WithStderr(stderr), jsonrpc.WithGracePeriod(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	// Wait until it runs, so the kill is what stops it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "deaf helper started") {
		if time.Now().After(deadline) {
			t.Fatal("the helper did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	conn.Close()
	if d := time.Since(start); d < 200*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Close took %v; want the grace period, then a kill", d)
	}
	// noLeaks proves the process was reaped (the waiting goroutine ended).
}

func TestDialCommandNotFound(t *testing.T) {
	noLeaks(t)
	_, err := jsonrpc.DialCommand(context.Background(), "/nonexistent/jsonrpc-server", nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := jsonrpc.DialCommand(ctx, os.Args[0], nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Example of a stdio client: start a language server and call it.
func ExampleDialCommand() {
	ctx := context.Background()
	conn, err := jsonrpc.DialCommand(ctx, "my-language-server", []string{"--stdio"},
		jsonrpc.WithFraming(jsonrpc.FramingHeader))
	if err != nil {
		fmt.Println("cannot start:", errors.Is(err, exec.ErrNotFound))
		return
	}
	defer conn.Close()
	var caps map[string]any
	_ = conn.Call(ctx, "initialize", map[string]any{"processId": nil}, &caps)
	// Output: cannot start: true
}
