package jsonrpc_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// memTransport is an extension transport kept in memory: "mem://name"
// listens under a name, and dialling the name calls that Server's Process.
type memTransport struct {
	mu      sync.Mutex
	servers map[string]*jsonrpc.Server
}

var mem = &memTransport{servers: map[string]*jsonrpc.Server{}}

func init() { jsonrpc.RegisterTransport("mem", mem.dial, mem.listen) }

type memEndpoint struct {
	name     string
	stopped  chan struct{}
	once     sync.Once
	shutdown int
}

func (e *memEndpoint) URL() string { return "mem://" + e.name }
func (e *memEndpoint) Shutdown(context.Context) error {
	mem.mu.Lock()
	delete(mem.servers, e.name)
	e.shutdown++
	mem.mu.Unlock()
	e.once.Do(func() { close(e.stopped) })
	return nil
}
func (e *memEndpoint) Wait() error { <-e.stopped; return nil }

func (m *memTransport) listen(s *jsonrpc.Server, u *url.URL) (jsonrpc.Endpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.servers[u.Host]; dup {
		return nil, errors.New("mem: " + u.Host + " in use")
	}
	m.servers[u.Host] = s
	return &memEndpoint{name: u.Host, stopped: make(chan struct{})}, nil
}

// memClient sends raw messages: only Call is needed by the tests.
type memClient struct {
	srv *jsonrpc.Server
	set jsonrpc.DialSettings
}

func (m *memTransport) dial(_ context.Context, u *url.URL, set jsonrpc.DialSettings) (jsonrpc.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.servers[u.Host]
	if s == nil {
		return nil, errors.New("mem: nobody listens on " + u.Host)
	}
	return &memClient{srv: s, set: set}, nil
}

func (c *memClient) Call(ctx context.Context, method string, params, result any) error {
	reply := c.srv.Process(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, params))
	*result.(*string) = string(reply)
	return nil
}
func (c *memClient) Notify(context.Context, string, any) error   { return errors.ErrUnsupported }
func (c *memClient) Batch(context.Context, *jsonrpc.Batch) error { return errors.ErrUnsupported }
func (c *memClient) Close() error                                { return nil }

func TestRegisteredTransportDialListenShutdown(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	l, err := srv.Listen("mem://svc")
	if err != nil {
		t.Fatal(err)
	}
	if l.URL != "mem://svc" {
		t.Fatalf("URL %q", l.URL)
	}
	c, err := jsonrpc.Dial(context.Background(), "mem://svc", jsonrpc.WithHeader("X-A", "b"), jsonrpc.WithMaxMessageSize(99))
	if err != nil {
		t.Fatal(err)
	}
	mc := c.(*memClient)
	if mc.set.Header.Get("X-A") != "b" || mc.set.MaxMessageSize != 99 {
		t.Fatalf("settings not passed: %+v", mc.set)
	}
	var reply string
	c.Call(context.Background(), "echo", `[1,"a"]`, &reply)
	if want := `{"jsonrpc":"2.0","id":1,"result":[1,"a"]}`; reply != want {
		t.Fatalf("reply %s, want %s", reply, want)
	}
	select {
	case <-l.Done():
		t.Fatal("listener stopped before Shutdown")
	default:
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-l.Done()
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := jsonrpc.Dial(context.Background(), "mem://svc"); err == nil {
		t.Fatal("dial after Shutdown succeeded")
	}
	// A Server that is shut down starts no new endpoint.
	if _, err := srv.Listen("mem://svc"); !errors.Is(err, jsonrpc.ErrServerClosed) {
		t.Fatalf("Listen after Shutdown: %v", err)
	}
}

// TestUnknownSchemeNamesRegistered: the error of an unknown scheme lists
// the built-in schemes, then the registered ones (mem, and the vocab
// tests' once they have run: -count 2).
func TestUnknownSchemeNamesRegistered(t *testing.T) {
	_, err := jsonrpc.Dial(context.Background(), "nope://x")
	if err == nil || !strings.Contains(err.Error(), "unix, mem") {
		t.Fatalf("Dial: %v", err)
	}
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	_, err = srv.Listen("nope://x")
	if err == nil || !strings.Contains(err.Error(), "stdio, mem") {
		t.Fatalf("Listen: %v", err)
	}
}

func TestRegisterTransportRefusesBuiltinAndTwice(t *testing.T) {
	for _, scheme := range []string{"http", "tcp", "stdio", "", "mem"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterTransport(%q) did not panic", scheme)
				}
			}()
			jsonrpc.RegisterTransport(scheme, mem.dial, mem.listen)
		}()
	}
}

func TestProcess(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux(), MaxMessageSize: 200, MaxBatchLen: 2}
	ctx := context.Background()
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":"x\u0041","method":"echo","params":[null]}`, `{"jsonrpc":"2.0","id":"x\u0041","result":[null]}`},
		{`{"jsonrpc":"2.0","method":"echo","params":[1]}`, ``},
		{`[{"jsonrpc":"2.0","method":"echo","params":[1]},{"jsonrpc":"2.0","method":"echo","params":[1]}]`, ``},
		{`[{"jsonrpc":"2.0","id":7,"method":"echo","params":[2]}]`, `[{"jsonrpc":"2.0","id":7,"result":[2]}]`},
		{`[1,2,3]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too long: 3 requests, the limit is 2"}}`},
		{`{"jsonrpc":"2.0","id":1,"result":1}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request: a response was sent to a server"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"echo","params":["` + strings.Repeat("a", 200) + `"]}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message too large: the limit is 200 bytes"}}`},
	} {
		if got := string(srv.Process(ctx, []byte(tc.in))); got != tc.want {
			t.Errorf("Process(%s)\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
	if got := string(srv.Process(ctx, []byte(`{`))); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`) {
		t.Errorf("Process({) = %s, want a parse error", got)
	}
}

// A message transport outside this package serves each delivery with
// Process and sends the reply back, if there is one.
func ExampleServer_Process() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "add", func(ctx context.Context, p []int) (int, error) { return p[0] + p[1], nil })
	srv := &jsonrpc.Server{Handler: mux}

	reply := srv.Process(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}`))
	fmt.Println(string(reply))
	reply = srv.Process(context.Background(), []byte(`{"jsonrpc":"2.0","method":"add","params":[2,3]}`))
	fmt.Println(reply == nil)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":5}
	// true
}

func TestMessageClient(t *testing.T) {
	srv := &jsonrpc.Server{Handler: demo.Shared{}.NewMux()}
	var sent []string
	var mu sync.Mutex
	c := jsonrpc.NewMessageClient(func(ctx context.Context, msg []byte, wantReply bool) ([]byte, error) {
		mu.Lock()
		sent = append(sent, fmt.Sprintf("%v %s", wantReply, msg))
		mu.Unlock()
		return srv.Process(ctx, msg), nil
	}, jsonrpc.WithMaxMessageSize(150))
	ctx := context.Background()
	var got []any
	if err := c.Call(ctx, "echo", []any{"x"}, &got); err != nil || len(got) != 1 || got[0] != "x" {
		t.Fatalf("Call: %v %v", got, err)
	}
	if err := c.Notify(ctx, "echo", []int{1}); err != nil {
		t.Fatal(err)
	}
	var b jsonrpc.Batch
	var r1 []int
	one := b.Call("echo", []int{1}, &r1)
	b.Notify("echo", []int{2})
	bad := b.Call("nope", nil, nil)
	if err := c.Batch(ctx, &b); err != nil || one.Err != nil || r1[0] != 1 {
		t.Fatalf("Batch: %v %v %v", err, one.Err, r1)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(bad.Err, &rpcErr) || rpcErr.Code != -32601 {
		t.Fatalf("batch error: %v", bad.Err)
	}
	// The reply bound holds.
	if err := c.Call(ctx, "echo", []string{strings.Repeat("a", 200)}, nil); !errors.Is(err, jsonrpc.ErrMessageTooLarge) || !strings.Contains(err.Error(), "response too large") {
		t.Fatalf("oversize reply: %v", err)
	}
	if !strings.HasPrefix(sent[0], `true {"jsonrpc":"2.0","id":`) || !strings.HasPrefix(sent[1], `false {"jsonrpc":"2.0","method":"echo"`) {
		t.Fatalf("sent %q", sent)
	}
	c.Close()
	if err := c.Call(ctx, "echo", nil, nil); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
