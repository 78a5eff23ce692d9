package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// TestNginx runs the shipped deploy/nginx/jsonrpc.conf in front of two
// `jrpc serve` instances on loopback ports chosen now. The config's
// proxy_read_timeout for WebSocket (60 s, nginx's default) is cut to 3 s
// and the instances ping every 1 s, so "idle past the timeout" takes 5 s
// instead of 90; fail_timeout is cut from 5 s to 1 s, so that a restarted
// instance is back in the rotation sooner.
func TestNginx(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		for _, p := range []string{"/usr/sbin/nginx", "/usr/local/sbin/nginx"} {
			if _, serr := os.Stat(p); serr == nil {
				nginx, err = p, nil
			}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("JSONRPC_REQUIRE_NGINX") != "" {
			t.Fatal("nginx is required here (CI or JSONRPC_REQUIRE_NGINX) but not installed: apt-get install -y nginx")
		}
		t.Skip("nginx not installed (apt-get install -y nginx); skipping the load-balancer test")
	}
	type inst struct {
		cmd      *exec.Cmd
		http, ws string
		log      *syncBuffer
	}
	// start runs an instance on the given host:port pair (":0" ports: new).
	start := func(httpAddr, wsAddr string) *inst {
		cmd := exec.Command(bin, "serve", "-v", "--listen", "http://"+httpAddr+"/", "--listen", "ws://"+wsAddr+"/ws",
			"--ws-ping", "1s", "--trusted-proxy", "127.0.0.1")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		log := &syncBuffer{}
		u := map[string]string{}
		if err := readListening(stderr, 2, u, log); err != nil {
			t.Fatal(err, log.String())
		}
		return &inst{cmd, strings.TrimPrefix(strings.TrimSuffix(u["http"], "/"), "http://"), strings.TrimPrefix(strings.TrimSuffix(u["ws"], "/ws"), "ws://"), log}
	}
	a, b := start("127.0.0.1:0", "127.0.0.1:0"), start("127.0.0.1:0", "127.0.0.1:0")
	mcpA, mcpLogA := startNginxMCP(t)
	mcpB, mcpLogB := startNginxMCP(t)

	conf, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nginx", "jsonrpc.conf"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := ln.Addr().String()
	ln.Close()
	text := string(conf)
	for old, new := range map[string]string{
		"127.0.0.1:8082 ": b.http + " ",
		"127.0.0.1:8091 ": a.ws + " ", "127.0.0.1:8092 ": b.ws + " ",
		"127.0.0.1:8081 ": a.http + " ",
		"127.0.0.1:8083 ": mcpA + " ", "127.0.0.1:8084 ": mcpB + " ",
		"listen 127.0.0.1:8080;":  "listen " + front + ";",
		"proxy_read_timeout 60s;": "proxy_read_timeout 3s;",
		"fail_timeout=5s;":        "fail_timeout=1s;",
	} {
		if !strings.Contains(text, old) {
			t.Fatalf("deploy/nginx/jsonrpc.conf has no %q", old)
		}
		text = strings.ReplaceAll(text, old, new)
	}
	prefix := t.TempDir()
	os.MkdirAll(filepath.Join(prefix, "logs"), 0o755)
	os.Chmod(prefix, 0o755)
	confPath := filepath.Join(prefix, "nginx.conf")
	os.WriteFile(confPath, []byte(text), 0o644)
	ng := exec.Command(nginx, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "logs", "error.log"),
		"-g", "daemon off; pid "+filepath.Join(prefix, "nginx.pid")+";")
	var ngOut syncBuffer
	ng.Stdout, ng.Stderr = &ngOut, &ngOut
	if err := ng.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ng.Process.Signal(syscall.SIGQUIT); ng.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", front)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			errLog, _ := os.ReadFile(filepath.Join(prefix, "logs", "error.log"))
			t.Fatalf("nginx did not listen: %s %s", ngOut.String(), errLog)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	t.Run("HTTPRoundRobin", func(t *testing.T) {
		// The client connects from 127.0.0.2 and forges an X-Forwarded-For
		// entry: the instances trust nginx (127.0.0.1) only, so they log
		// 127.0.0.2, the address nginx saw.
		tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}
		c := jsonrpc.NewHTTPClient("http://"+front+"/", jsonrpc.WithHTTPClient(&http.Client{Transport: tr}), jsonrpc.WithHeader("X-Forwarded-For", "203.0.113.7"))
		defer c.Close()
		for i := range 20 {
			var got []any
			if err := c.Call(ctx, "get_data", nil, &got); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		na, nb := strings.Count(a.log.String(), "get_data"), strings.Count(b.log.String(), "get_data")
		if na < 5 || nb < 5 {
			t.Fatalf("round-robin: a logged %d calls, b %d", na, nb)
		}
		all := a.log.String() + b.log.String()
		if !strings.Contains(all, "127.0.0.2") || strings.Contains(all, "203.0.113.7") {
			t.Fatalf("remote addresses in the logs:\n%s", all)
		}
	})

	t.Run("MCP", func(t *testing.T) { testNginxMCP(t, ctx, front, mcpLogA, mcpLogB) })

	t.Run("WebSocketIdlePastProxyTimeout", func(t *testing.T) {
		// Client pings off: only the instance's pings (1 s) keep nginx's
		// 3 s proxy_read_timeout from closing the socket.
		c, err := jsonrpc.Dial(ctx, "ws://"+front+"/ws", jsonrpc.WithPing(-1, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Call(ctx, "get_data", nil, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if err := c.Call(ctx, "get_data", nil, nil); err != nil {
			t.Fatalf("after 5 s idle (proxy_read_timeout 3 s): %v", err)
		}
	})

	// A rolling restart, 20 times in a row with the CPU busy: each instance
	// in turn gets SIGTERM and a new one starts on its ports, while four
	// clients call through nginx. No call may fail: nginx resends a call
	// only when its connect was refused, so every call an instance
	// accepted must be answered.
	t.Run("RollingSIGTERMUnderLoad", func(t *testing.T) {
		var stop atomic.Bool
		var wg sync.WaitGroup
		defer wg.Wait()
		defer stop.Store(true)
		for range 2 {
			wg.Go(func() { // CPU hogs
				for !stop.Load() {
				}
			})
		}
		var ok atomic.Int64
		var mu sync.Mutex
		var failures []error
		for range 4 {
			c := jsonrpc.NewHTTPClient("http://" + front + "/")
			defer c.Close()
			wg.Go(func() {
				for !stop.Load() {
					if err := c.Call(ctx, "sleep", map[string]int{"ms": 2}, nil); err != nil {
						mu.Lock()
						failures = append(failures, err)
						mu.Unlock()
						continue
					}
					ok.Add(1)
				}
			})
		}
		// served waits until in has logged n calls: it is in nginx's rotation.
		served := func(in *inst, n int) {
			for strings.Count(in.log.String(), "method=sleep") < n && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
		}
		served(a, 10)
		served(b, 10)
		insts := []*inst{a, b}
		const restarts = 20
		for i := range restarts {
			old := insts[i%2]
			old.cmd.Process.Signal(syscall.SIGTERM)
			if err := old.cmd.Wait(); err != nil {
				t.Errorf("restart %d: the instance exited with %v", i, err)
			}
			insts[i%2] = start(old.http, old.ws)
			served(insts[i%2], 10) // nginx tries it again after fail_timeout
		}
		stop.Store(true)
		wg.Wait()
		for i, err := range failures {
			if i == 5 {
				t.Errorf("and %d more", len(failures)-5)
				break
			}
			t.Error(err)
		}
		if len(failures) > 0 {
			errLog, _ := os.ReadFile(filepath.Join(prefix, "logs", "error.log"))
			t.Logf("nginx error.log:\n%s", errLog)
		}
		fmt.Fprintf(os.Stderr, "nginx: %d rolling restarts, %d calls, %d failed\n", restarts, ok.Load(), len(failures))
	})
}
