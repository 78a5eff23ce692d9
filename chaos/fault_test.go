package chaos_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/chaos"
)

func TestParseFault(t *testing.T) {
	for _, spec := range []string{
		"method=eth_call,dir=in,nth=3,drop", "dir=out,p=0.25,delay=10ms..50ms", "delay=exp:20ms", "error=-32000",
		"method=tools/call,sse-cut-after=2", "cut-after-bytes=100", "bandwidth=1000", "half-open", "slow-read", "corrupt", "reorder", "dup", "cut",
	} {
		f, err := chaos.ParseFault(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if f.String() != spec {
			t.Errorf("%s reads back as %s", spec, f)
		}
	}
	for _, bad := range []string{"", "nth=2", "drop,cut", "dir=up,drop", "nth=0,drop", "p=2,drop", "p=0,drop", "drop=1", "delay=fast",
		"delay=50ms..10ms", "error=x", "bandwidth=0", "explode"} {
		if _, err := chaos.ParseFault(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := chaos.Start("", "quic://127.0.0.1:1", chaos.Options{}); err == nil || !strings.Contains(err.Error(), "want tcp, tls, unix") {
		t.Errorf("a quic:// target: %v", err)
	}
}

// lineEcho is a raw target: each line it reads, written back at once.
func lineEcho(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return "tcp://" + ln.Addr().String()
}

type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, p *chaos.Proxy) *rawConn {
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{c, bufio.NewReader(c)}
}

func (c *rawConn) roundTrip(t *testing.T, msg string) string {
	t.Helper()
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		t.Fatal(err)
	}
	line, err := c.br.ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// p with a seed picks the same messages on every run, and about p of them.
func TestProbabilitySeeded(t *testing.T) {
	target := lineEcho(t)
	picks := func(seed uint64) string {
		p, err := chaos.Start("", target, chaos.Options{Seed: seed, Faults: []*chaos.Fault{chaos.MustParse("dir=in,p=0.3,corrupt")}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := dialRaw(t, p)
		var b strings.Builder
		for range 200 {
			if strings.ContainsRune(c.roundTrip(t, `{"jsonrpc":"2.0","method":"m","id":1}`), 0xFFFD) || !strings.HasPrefix(c.roundTrip(t, `{}`), "{") {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		if n := len(p.Events()); n < 80 || n > 160 {
			t.Errorf("seed %d: %d faults in 400 messages at p=0.3", seed, n)
		}
		return b.String()
	}
	a, b, c := picks(7), picks(7), picks(8)
	if a != b {
		t.Errorf("seed 7 picked differently:\n%s\n%s", a, b)
	}
	if a == c {
		t.Error("seeds 7 and 8 picked the same messages")
	}
}

// bandwidth paces a message; slow-read slows the reading of its sender;
// delay holds one message; half-open stops the connection, socket open.
func TestPacingAndHalfOpen(t *testing.T) {
	target := lineEcho(t)
	msg := `{"jsonrpc":"2.0","method":"m","params":["` + strings.Repeat("x", 360) + `"],"id":1}` // 411 bytes
	for _, tc := range []struct {
		spec     string
		min, max time.Duration
	}{
		{"dir=out,nth=2,bandwidth=2000", 150 * time.Millisecond, 2 * time.Second}, // 412 bytes at 2000 B/s: 206 ms
		{"dir=in,nth=1,slow-read", 150 * time.Millisecond, 3 * time.Second},       // from the first message on: 412 bytes, 64 every 50 ms
		{"dir=in,nth=2,delay=200ms", 200 * time.Millisecond, 2 * time.Second},
	} {
		p := chaos.New(target, chaos.MustParse(tc.spec))
		c := dialRaw(t, p)
		c.roundTrip(t, `{}`) // connected, framing decided
		start := time.Now()
		got := c.roundTrip(t, msg)
		if d := time.Since(start); got != msg || d < tc.min || d > tc.max {
			t.Errorf("%s: %v (want %v to %v), %d bytes back", tc.spec, d, tc.min, tc.max, len(got))
		}
		p.Close()
	}
	p := chaos.New(target, chaos.MustParse("dir=in,nth=2,half-open"))
	defer p.Close()
	c := dialRaw(t, p)
	c.roundTrip(t, `{}`)
	io.WriteString(c, msg+"\n")
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := c.br.ReadByte(); !isTimeout(err) {
		t.Fatalf("half-open: read %v, want a timeout (the socket open, nothing said)", err)
	}
	if ev := p.Events(); len(ev) != 1 || ev[0].Action != chaos.HalfOpen || ev[0].Msg != 2 {
		t.Fatalf("events %v", ev)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a half-open connection")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
