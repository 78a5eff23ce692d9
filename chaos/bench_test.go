package chaos_test

import (
	"context"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
)

// forwarder is the baseline: a plain TCP forwarder (io.Copy each way).
func forwarder(b *testing.B, target string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	b.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, t)
			mu.Unlock()
			wg.Go(func() { io.Copy(t, c); t.Close() })
			wg.Go(func() { io.Copy(c, t); c.Close() })
		}
	})
	return "tcp://" + ln.Addr().String()
}

// BenchmarkOverhead: one call's round trip (two messages) directly, through
// a plain TCP forwarder, and through the chaos proxy with no fault, with a
// fault that never matches (by method: every message is read), and with
// a fault that matches nothing by nth (not read). With -cpu and
// RunParallel-free sequential calls, ns/op is latency per call.
func BenchmarkOverhead(b *testing.B) {
	l := &ledger{n: map[string]int{}}
	direct := workServer(b, "tcp", l)
	host := direct[len("tcp://"):]
	if host[len(host)-1] == '/' {
		host = host[:len(host)-1]
	}
	for _, tc := range []struct {
		name string
		url  func() string
	}{
		{"direct", func() string { return direct }},
		{"forwarder", func() string { return forwarder(b, host) }},
		{"chaos-nofault", func() string { return proxy(b, direct) }},
		{"chaos-nomatch-method", func() string { return proxy(b, direct, "method=never,drop") }},
		{"chaos-nomatch-nth", func() string { return proxy(b, direct, "dir=in,nth=1000000000,drop") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := jsonrpc.Dial(context.Background(), tc.url())
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			var s []string
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := c.Call(ctx, "echo", []string{"x"}, &s); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time of the whole process (client, server, proxy) a call:
			// steadier than wall time on a shared machine.
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func proxy(b *testing.B, target string, faults ...string) string {
	var fs []*chaos.Fault
	for _, f := range faults {
		fs = append(fs, chaos.MustParse(f))
	}
	p := chaos.New(target, fs...)
	b.Cleanup(func() { p.Close() })
	return p.URL
}
