package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// startServe starts `jrpc serve` with args and returns the URL it prints.
func startServe(t *testing.T, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	srv := exec.Command(bin, append([]string{"serve"}, args...)...)
	stderr, _ := srv.StderrPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	log := &syncBuffer{}
	u := map[string]string{}
	if err := readListening(stderr, 1, u, log); err != nil {
		t.Fatal(err, log.String())
	}
	for _, v := range u {
		return srv, v, log
	}
	return srv, "", log
}

// startNATSServer runs a NATS server on loopback until the test ends and
// returns its client URL, without a trailing slash.
func startNATSServer(t *testing.T) (*natsserver.Server, string) {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(ns.Shutdown)
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	return ns, strings.TrimSuffix(ns.ClientURL(), "/")
}

func TestNATSServeCallNotifyBatchBench(t *testing.T) {
	ns, nsURL := startNATSServer(t)
	url := nsURL + "/demo.rpc"
	a, aURL, aLog := startServe(t, "--listen", url)
	_, _, _ = startServe(t, "--listen", url)
	if aURL != url {
		t.Fatalf("listening on %q, want %q", aURL, url)
	}
	for range 4 {
		expect(t, run(t, "", "call", url, "get_data"), 0, `["hello",5]`+"\n")
	}
	expect(t, run(t, "", "notify", url, "notify_hello", "[7]"), 0, "")
	expect(t, run(t, `[{"jsonrpc":"2.0","id":1,"method":"get_data"},{"jsonrpc":"2.0","method":"update"}]`, "batch", url, "-"), 0,
		`{"id":1,"method":"get_data","result":["hello",5]}`+"\n"+`{"method":"update","notification":true}`+"\n")
	expect(t, run(t, "", "bench", url, "get_data", "-n", "200"), 0, "")

	// Both instances are discoverable, with their counts.
	nc, err := natsgo.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	inbox := nc.NewRespInbox()
	sub, _ := nc.SubscribeSync(inbox)
	nc.PublishRequest("$SRV.STATS", inbox, nil)
	total := 0
	for range 2 {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var st micro.Stats
		if err := json.Unmarshal(m.Data, &st); err != nil || st.Name != "jsonrpc-demo-service" || st.Endpoints[0].Name != "jsonrpc" {
			t.Fatalf("stats %s: %v", m.Data, err)
		}
		total += st.Endpoints[0].NumRequests
	}
	if total < 4+1+1+200 {
		t.Fatalf("%d requests counted", total)
	}

	// SIGTERM drains one instance; the other serves on.
	a.Process.Signal(syscall.SIGTERM)
	if err := a.Wait(); err != nil {
		t.Fatalf("serve exited with %v\n%s", err, aLog.String())
	}
	expect(t, run(t, "", "call", url, "get_data"), 0, `["hello",5]`+"\n")

	// Nobody serving: a transport error at once, naming the cause.
	r := run(t, "", "call", strings.TrimSuffix(ns.ClientURL(), "/")+"/nobody", "get_data")
	if r.code != exitTransport || !strings.Contains(r.stderr, "no server serves the subject") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// --nats-creds reaches the connection.
	missing := filepath.Join(t.TempDir(), "none.creds")
	r = run(t, "", "--nats-creds", missing, "call", url, "get_data")
	if r.code != exitTransport || !strings.Contains(r.stderr, "none.creds") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	_ = os.Remove(missing)
}
