package bench

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var (
	idleScale = flag.String("bench.idlescale", "100",
		"comma-separated counts of idle TCP connections BenchmarkIdleScale opens (the full run: 1,1000,10000,100000)")
	idleScaleWait = flag.Duration("bench.idlescalewait", 100*time.Millisecond, "how long BenchmarkIdleScale lets the connections idle before measuring")
)

// BenchmarkIdleScale (issue 41): per implementation and per count of
// -bench.idlescale, a child process opens that many TCP connections from 8
// dialers, each making one call, then idles; the server's process (a fresh
// one for each implementation and count) reports its memory per idle
// connection (Go heap and stacks, of which stacks, and resident set size),
// goroutines per connection, the accept rate (connections opened and
// called per second, as the child saw it), and the round trip of one busy
// connection beside them (busyLatency). The benchmark
// raises its file limit (RLIMIT_NOFILE) to the hard limit, and the hard
// limit too where the process may; a count the limit cannot hold is
// skipped, naming the limit.
func BenchmarkIdleScale(b *testing.B) {
	counts, err := parseCounts(*idleScale)
	if err != nil {
		b.Fatal(err)
	}
	limit := raiseFileLimit(slices.Max(counts) + 1024)
	for _, im := range impls(hasTCP) {
		for _, n := range counts {
			b.Run(fmt.Sprintf("%s/conns=%d", im.Name, n), func(b *testing.B) {
				if uint64(n)+256 > limit {
					b.Skipf("%d connections need more open files than this process's limit of %d (raise the hard limit: ulimit -Hn, or CAP_SYS_RESOURCE)", n, limit)
				}
				idleScaleRun(b, im, n)
			})
		}
	}
}

func idleScaleRun(b *testing.B, im *Impl, n int) {
	if !measureHere(b) {
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	serve := im.ServeTCP
	if im.ServeIdle != nil {
		serve = im.ServeIdle
	}
	stop := serve(l)
	defer stop()
	debug.FreeOSMemory()
	before, rssBefore := snapshot(), residentBytes()
	b.ResetTimer()
	stopClients, took := startIdleClientsTimed(b, "tcp", l.Addr().String(), im.Request, n, 8)
	defer stopClients()
	b.StopTimer()
	time.Sleep(*idleScaleWait)
	after := snapshot()
	debug.FreeOSMemory() // as before: the resident set the connections hold, not what a burst of connecting left unreturned
	rssAfter := residentBytes()
	if *idleProf != "" {
		writeHeapProfile(b, *idleProf+strings.ReplaceAll(b.Name(), "/", "-")+".heap")
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric((float64(after.bytes)-float64(before.bytes))/float64(n), "B/conn")
	b.ReportMetric((float64(after.stack)-float64(before.stack))/float64(n), "stackB/conn")
	b.ReportMetric((float64(rssAfter)-float64(rssBefore))/float64(n), "RSS-B/conn")
	b.ReportMetric(float64(after.goroutines-before.goroutines)/float64(n), "goroutines/conn")
	b.ReportMetric(float64(n)/took.Seconds(), "conns/s")
	p50, p99 := busyLatency(b, im, l.Addr().String())
	b.ReportMetric(p50, "busy-p50-µs")
	b.ReportMetric(p99, "busy-p99-µs")
}

// busyLatency is the round trip of a busy connection beside the idle ones:
// the median and 99th percentile, in µs, of 2,000 calls made one at a time
// on a connection of this process (after 200 to warm it up).
func busyLatency(b *testing.B, im *Impl, addr string) (p50, p99 float64) {
	ctx := context.Background()
	c, err := im.DialTCP(ctx, addr, SmallParams)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rtt := make([]time.Duration, 2000)
	for i := -200; i < len(rtt); i++ {
		in, out, start := SmallParams, Params{}, time.Now()
		if err := c.Echo(ctx, &in, &out); err != nil {
			b.Fatal(err)
		}
		if i >= 0 {
			rtt[i] = time.Since(start)
		}
	}
	slices.Sort(rtt)
	return float64(rtt[len(rtt)/2]) / 1e3, float64(rtt[len(rtt)*99/100]) / 1e3
}

// parseCounts reads "1,100,1000".
func parseCounts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-bench.idlescale: %q is not a count of connections", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// raiseFileLimit raises this process's open-file limit (which its child
// processes inherit) towards want: the soft limit to the hard one, and
// both to want where the process may (root with CAP_SYS_RESOURCE). It
// returns the soft limit in force.
func raiseFileLimit(want int) uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1024
	}
	if uint64(want) > rl.Max {
		up := syscall.Rlimit{Cur: uint64(want), Max: uint64(want)}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &up) == nil {
			return up.Cur
		}
	}
	rl.Cur = rl.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	return rl.Cur
}

// residentBytes is this process's resident set size (VmRSS), 0 where
// /proc is missing.
func residentBytes() uint64 {
	f, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestRaiseFileLimit: the limit never drops, and reaches the hard limit.
func TestRaiseFileLimit(t *testing.T) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skip(err)
	}
	got := raiseFileLimit(int(rl.Cur) + 1)
	if got < rl.Cur || got < rl.Max && got < rl.Cur+1 {
		t.Fatalf("limit %d after raising from %d (hard %d)", got, rl.Cur, rl.Max)
	}
	if residentBytes() == 0 {
		t.Skip("no /proc/self/status")
	}
}
