package chaos_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/chaos"
)

// The proxy's network faults against the kernel's: the test runs itself
// again in a new user and network namespace (unshare -rn: its own
// loopback, no privilege needed) where it shapes lo with tc, and compares
// what a client sees through the real qdisc with what it sees through the
// proxy's fault of the same size on an unshaped connection. tbf (a rate
// limit) against bandwidth=; netem delay against delay=. Each comparison
// is skipped with its reason where the machine lacks namespaces, tc or the
// qdisc.
func TestNetworkNamespaceFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child test in a network namespace: not in -short")
	}
	if os.Getenv("CHAOS_NETNS_CHILD") != "" {
		t.Skip("in the child")
	}
	for _, tool := range []string{"unshare", "tc", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on this machine", tool)
		}
	}
	if out, err := exec.Command("unshare", "-rn", "true").CombinedOutput(); err != nil {
		t.Skipf("user and network namespaces not permitted here: %v %s", err, out)
	}
	for _, c := range netnsCases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			script := "ip link set lo up mtu 1500 && tc qdisc add dev lo root " + c.qdisc + " || exit 42; exec \"$0\" -test.run='^TestNetnsChild$' -test.v"
			cmd := exec.CommandContext(ctx, "unshare", "-rn", "sh", "-c", script, os.Args[0])
			cmd.Env = append(os.Environ(), "CHAOS_NETNS_CHILD="+c.name)
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 42 {
				t.Skipf("tc qdisc %s: not available on this kernel: %s", c.qdisc, strings.TrimSpace(string(out)))
			}
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			for line := range strings.Lines(string(out)) {
				if strings.Contains(line, "netns:") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// netnsCases pair a qdisc on lo with the proxy's fault that should look
// the same to a client. A response of size bytes is fetched (small for
// delay); lo shapes both directions, the fault matches every message.
var netnsCases = []struct {
	name, qdisc, fault string
	size               int
}{
	{"tbf", "tbf rate 2mbit burst 16kb latency 200ms", "dir=out,bandwidth=250000", 256 << 10},
	{"netem-delay", "netem delay 25ms", "delay=25ms", 16},
}

// TestNetnsChild runs in the namespace (TestNetworkNamespaceFaults): it
// times calls over the shaped loopback, then through the proxy over an
// unshaped one (a second address the qdisc does not see is not possible
// on lo, so the qdisc is removed first), and fails when they differ by
// more than a factor of 1.6.
func TestNetnsChild(t *testing.T) {
	name := os.Getenv("CHAOS_NETNS_CHILD")
	if name == "" {
		t.Skip("run by TestNetworkNamespaceFaults")
	}
	i := slices.IndexFunc(netnsCases, func(c struct {
		name, qdisc, fault string
		size               int
	}) bool {
		return c.name == name
	})
	c := netnsCases[i]
	url := sizedTarget(t, c.size)
	shaped := timeCalls(t, url, c.size)
	if out, err := exec.Command("tc", "qdisc", "del", "dev", "lo", "root").CombinedOutput(); err != nil {
		t.Fatalf("tc qdisc del: %v %s", err, out)
	}
	p := chaos.New(url, chaos.MustParse(c.fault))
	defer p.Close()
	proxied := timeCalls(t, p.URL, c.size)
	fmt.Printf("netns: %s: qdisc %q median %v; proxy %q median %v\n", name, c.qdisc, shaped, c.fault, proxied)
	if r := float64(proxied) / float64(shaped); r < 1/1.6 || r > 1.6 {
		t.Fatalf("%s: the proxy's %v against the kernel's %v (ratio %.2f)", name, proxied, shaped, r)
	}
}

// sizedTarget serves "blob", whose result is a string of n bytes, on tcp.
func sizedTarget(t *testing.T, n int) string {
	mux := jsonrpc.NewMux()
	blob := strings.Repeat("x", n)
	jsonrpc.Register(mux, "blob", func(context.Context, struct{}) (string, error) { return blob, nil })
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		l.Err()
	})
	return l.URL
}

// timeCalls returns the median duration of 3 calls of blob on one
// connection (after one call that warms it).
func timeCalls(t *testing.T, url string, n int) time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithMaxMessageSize(4<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got string
	var ds []time.Duration
	for i := range 4 {
		start := time.Now()
		if err := c.Call(ctx, "blob", nil, &got); err != nil || len(got) != n {
			t.Fatalf("blob: %v (%d bytes)", err, len(got))
		}
		if i > 0 {
			ds = append(ds, time.Since(start))
		}
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
