package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkIdleTCP measures the server's memory (HeapInuse+StackInuse) and
// goroutines per idle TCP connection. b.N is the number of connections
// (run with -benchtime=2000x); the clients live in a child process, so only
// the server side is counted. Each client makes one call, then idles.
func BenchmarkIdleTCP(b *testing.B) {
	for _, im := range impls(hasTCP) {
		b.Run(im.Name, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			serve := im.ServeTCP
			if im.ServeIdle != nil {
				serve = im.ServeIdle
			}
			runIdle(b, "tcp", l.Addr().String(), im.Request, func() func() { return serve(l) })
		})
	}
}

// BenchmarkIdleWS is BenchmarkIdleTCP over WebSocket.
func BenchmarkIdleWS(b *testing.B) {
	for _, im := range impls(func(im *Impl) bool { return im.WSHandler != nil }) {
		b.Run(im.Name, func(b *testing.B) {
			var ts *httptest.Server
			var stopHandler func()
			start := func() func() {
				var h = im.WSHandler
				hh, stop := h()
				stopHandler = stop
				ts.Config.Handler = hh
				ts.Start()
				return func() { ts.CloseClientConnections(); ts.Close(); stopHandler() }
			}
			ts = httptest.NewUnstartedServer(nil)
			addr := ts.Listener.Addr().String()
			runIdle(b, "ws", addr, im.Request, start)
		})
	}
}

// writeHeapProfile writes the in-use heap profile while the connections
// are still open (a profile taken when the benchmark ends sees them closed).
func writeHeapProfile(b *testing.B, name string) {
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

type memSnapshot struct {
	bytes      uint64 // HeapInuse + StackInuse
	stack      uint64 // StackInuse alone
	goroutines int
}

func snapshot() memSnapshot {
	settle()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnapshot{bytes: ms.HeapInuse + ms.StackInuse, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

// settle waits until the goroutine count has not changed for 100ms (at most 5s).
func settle() {
	deadline := time.Now().Add(5 * time.Second)
	last, same := -1, 0
	for time.Now().Before(deadline) && same < 5 {
		time.Sleep(20 * time.Millisecond)
		if n := runtime.NumGoroutine(); n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
}

// runIdle starts the server (before the first snapshot), has a child
// process open b.N connections (capped by -bench.idlemax) that each make
// one call, measures again, and reports the difference per connection.
func runIdle(b *testing.B, mode, addr, request string, start func() (stop func())) {
	n := min(b.N, *idleMax)
	if !measureHere(b) {
		return
	}
	stop := start()
	defer stop()
	before := snapshot()
	b.ResetTimer()
	defer startIdleClients(b, mode, addr, request, n)()
	b.StopTimer()
	time.Sleep(*idleWait) // idle means idle for a while, for every implementation
	after := snapshot()
	if *idleProf != "" {
		writeHeapProfile(b, *idleProf+strings.ReplaceAll(b.Name(), "/", "-")+".heap")
	}
	perConn := (float64(after.bytes) - float64(before.bytes)) / float64(n)
	b.ReportMetric(perConn, "B/conn")
	b.ReportMetric((float64(after.stack)-float64(before.stack))/float64(n), "stackB/conn")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(n), "goroutines/conn")
}

// measureHere reports whether this process measures b's idle connections.
// The measuring process is a fresh one (an idle benchmark's child, this
// test binary run for b alone): a runtime that has run another
// implementation, or another count, keeps the goroutine records
// (runtime.g, about 450 B each, never freed) that its goroutines left, and
// the next one's goroutines would reuse them, uncharged. The parent runs
// the child and reports the child's metrics as b's. Both skip b's first
// run (b.N is 1) when -benchtime asks for more connections.
func measureHere(b *testing.B) bool {
	if bt := flag.Lookup("test.benchtime").Value.String(); b.N == 1 && bt != "1x" && strings.HasSuffix(bt, "x") {
		return false
	}
	if os.Getenv("BENCH_IDLE_SERVER") != "" {
		return true
	}
	var pattern []string
	for part := range strings.SplitSeq(b.Name(), "/") {
		pattern = append(pattern, "^"+regexp.QuoteMeta(part)+"$")
	}
	args := []string{"-test.run=^$", "-test.bench=" + strings.Join(pattern, "/"), "-test.benchtime=" + strconv.Itoa(b.N) + "x"}
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "bench.") || f.Name == "test.memprofilerate" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env, cmd.Stderr = append(os.Environ(), "BENCH_IDLE_SERVER=1"), os.Stderr
	out, err := cmd.Output()
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], b.Name()) {
			continue
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, perr := strconv.ParseFloat(f[i], 64)
			if perr == nil {
				b.ReportMetric(v, f[i+1])
			}
		}
		return false
	}
	b.Fatalf("the measuring process reported nothing for %s (%v):\n%s", b.Name(), err, out)
	return false
}

// startIdleClients has a child process open n connections to addr that
// each make one call and then idle; it returns once they are all open. The
// returned function ends the child.
func startIdleClients(b *testing.B, mode, addr, request string, n int) (stop func()) {
	stop, _ = startIdleClientsTimed(b, mode, addr, request, n, 1)
	return stop
}

// startIdleClientsTimed is startIdleClients with dialers connecting at
// once; it also returns how long the child took to open the connections
// and make their calls.
func startIdleClientsTimed(b *testing.B, mode, addr, request string, n, dialers int) (stop func(), took time.Duration) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestIdleClientProcess$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), "BENCH_IDLE_CLIENT="+mode, "BENCH_IDLE_ADDR="+addr,
		"BENCH_IDLE_N="+strconv.Itoa(n), "BENCH_IDLE_REQUEST="+request, "BENCH_IDLE_DIALERS="+strconv.Itoa(dialers))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	stop = func() { stdin.Close(); cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	ns, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	took64, perr := strconv.ParseInt(ns, 10, 64)
	if err != nil || !ok || perr != nil {
		stop()
		b.Fatalf("the client process did not connect: %q %v", strings.TrimSpace(line), err)
	}
	return stop, time.Duration(took64)
}

// ipBindAddressNoPort is Linux's IP_BIND_ADDRESS_NO_PORT socket option.
const ipBindAddressNoPort = 24

// bindAddressNoPort asks the kernel to choose a bound socket's port at
// connect (IP_BIND_ADDRESS_NO_PORT); elsewhere the option fails and is
// ignored.
func bindAddressNoPort(_, _ string, c syscall.RawConn) error {
	return c.Control(func(fd uintptr) {
		syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
	})
}

// TestIdleClientProcess is the child process of the Idle benchmarks: it
// opens the connections from BENCH_IDLE_DIALERS goroutines, makes one call
// on each, prints "ready" and the nanoseconds that took, and holds them
// until its standard input closes. Over TCP it spreads the connections
// over local addresses 127.0.0.1, 127.0.0.2, … (20,000 each), as one
// address has fewer ephemeral ports than 100,000 connections need.
func TestIdleClientProcess(t *testing.T) {
	mode := os.Getenv("BENCH_IDLE_CLIENT")
	if mode == "" {
		t.Skip("only run as the child process of the Idle benchmarks")
	}
	addr, request := os.Getenv("BENCH_IDLE_ADDR"), os.Getenv("BENCH_IDLE_REQUEST")
	n, _ := strconv.Atoi(os.Getenv("BENCH_IDLE_N"))
	dialers, _ := strconv.Atoi(os.Getenv("BENCH_IDLE_DIALERS"))
	keep := make([]any, n)
	var next atomic.Int64
	var failed atomic.Bool
	start := time.Now()
	var wg sync.WaitGroup
	for range max(dialers, 1) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && !failed.Load(); i = int(next.Add(1) - 1) {
				c, err := idleClient(mode, addr, request, i)
				keep[i] = c
				if err != nil && !failed.Swap(true) {
					fmt.Printf("error: connection %d: %v\n", i, err)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return
	}
	fmt.Println("ready", time.Since(start).Nanoseconds())
	os.Stdin.Read(make([]byte, 1)) // until the parent closes it
	// Reset rather than close: a closed connection would hold its port in
	// TIME_WAIT for a minute, and the next count's run needs the ports.
	for _, c := range keep {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
			tc.Close()
		}
	}
}

// idleClient opens connection i and makes one call on it.
func idleClient(mode, addr, request string, i int) (any, error) {
	ctx := context.Background()
	switch mode {
	case "tcp":
		var d net.Dialer
		if k := i / 20000; k > 0 {
			// From 127.0.0.2 on: bound to the address only, the port left
			// to connect, as the plain dial leaves it (a port bound before
			// connect cannot be shared with other destinations).
			d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, byte(k/256), byte(1+k%256))}
			d.Control = bindAddressNoPort
		}
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		if _, err = nc.Write([]byte(request + "\n")); err != nil {
			return nc, err
		}
		line, err := bufio.NewReader(nc).ReadString('\n')
		if err == nil && !isReply(line, request) {
			err = fmt.Errorf("unexpected reply %q", line)
		}
		return nc, err
	case "ws":
		c, _, err := websocket.Dial(ctx, "ws://"+addr+"/", nil)
		if err != nil {
			return nil, err
		}
		if err = c.Write(ctx, websocket.MessageText, []byte(request)); err != nil {
			return c, err
		}
		_, msg, err := c.Read(ctx)
		if err == nil && !isReply(string(msg), request) {
			err = fmt.Errorf("unexpected reply %q", msg)
		}
		return c, err
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// isReply reports whether msg answers request: a response with a result,
// or the request itself from the raw echo.
func isReply(msg, request string) bool {
	msg = strings.TrimSpace(msg)
	return strings.Contains(msg, `"result"`) || msg == request
}
