package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// jrpc serve exports traces (console exporter: stderr only) and Prometheus
// metrics; jrpc call -v sends its trace context and prints the trace id.
func TestServeTelemetry(t *testing.T) {
	srv := exec.Command(bin, "serve", "--listen", "http://127.0.0.1:0/", "--listen", "tcp://127.0.0.1:0", "--metrics", "http://127.0.0.1:0/metrics")
	srv.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=console", "OTEL_SERVICE_NAME=calc-test")
	stderr, _ := srv.StderrPipe()
	var stdout bytes.Buffer
	srv.Stdout = &stdout
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	defer srv.Process.Kill()
	var log syncBuffer
	u := map[string]string{}
	if err := readListening(stderr, 2, u, &log); err != nil {
		t.Fatal(err, log.String())
	}
	m := regexp.MustCompile(`metrics on (http://\S+)`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("no metrics line in %s", log.String())
	}
	metricsURL := m[1]

	// A traced call: the trace id printed is the one the server's span joins.
	r := runEnv(t, []string{"OTEL_TRACES_EXPORTER=console"}, "", "call", "-v", u["http"], "subtract", "[42,23]")
	expect(t, r, 0, "19\n")
	tm := regexp.MustCompile(`trace id ([0-9a-f]{32})`).FindStringSubmatch(r.stderr)
	if tm == nil {
		t.Fatalf("call -v printed no trace id:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "Traceparent: 00-"+tm[1]) {
		t.Errorf("the request did not carry the trace context:\n%s", r.stderr)
	}
	waitLog(t, &log, `"TraceID":"`+tm[1]+`"`)
	if !strings.Contains(log.String(), `"Value":"calc-test"`) {
		t.Errorf("service name not in the spans")
	}
	// Without tracing, call -v prints no trace id.
	r = runEnv(t, []string{"OTEL_TRACES_EXPORTER=none"}, "", "call", "-v", u["http"], "subtract", "[1,1]")
	if strings.Contains(r.stderr, "trace id") {
		t.Errorf("trace id printed with tracing off:\n%s", r.stderr)
	}
	run(t, "", "call", u["tcp"], "subtract", `{"minuend":"x","subtrahend":1}`)

	// Random method names add no series.
	var batch []string
	for i := range 300 {
		batch = append(batch, fmt.Sprintf(`{"jsonrpc":"2.0","method":"rnd%d","id":%d}`, i, i))
	}
	resp, err := http.Post(u["http"], "application/json", strings.NewReader("["+strings.Join(batch, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// Scraped by a real HTTP client: names, labels, buckets.
	resp, err = http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	for _, want := range []string{
		"# TYPE rpc_server_call_duration_seconds histogram",
		`rpc_method="subtract"`,
		`rpc_system_name="jsonrpc"`,
		`error_type="-32602"`,
		`rpc_response_status_code="-32602"`,
		`rpc_method="_OTHER"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s:\n%.2000s", want, text)
		}
	}
	buckets := regexp.MustCompile(`rpc_server_call_duration_seconds_bucket\{[^}]*rpc_method="subtract",rpc_system_name="jsonrpc",le="([^"]+)"\}`).FindAllStringSubmatch(text, -1)
	var les []string
	for _, b := range buckets {
		les = append(les, b[1])
	}
	if got := strings.Join(les, " "); got != "0.005 0.01 0.025 0.05 0.075 0.1 0.25 0.5 0.75 1 2.5 5 7.5 10 +Inf" {
		t.Errorf("subtract buckets: %s", got)
	}
	if n := strings.Count(text, "rpc_server_call_duration_seconds_count{"); n != 3 {
		t.Errorf("%d series (want subtract ok, subtract -32602, _OTHER -32601):\n%s", n, text)
	}
	if regexp.MustCompile(`rnd\d`).MatchString(text) {
		t.Errorf("a random method name became a label")
	}
	srv.Process.Signal(os.Interrupt)
	srv.Wait()
	if stdout.Len() != 0 {
		t.Errorf("serve wrote on stdout: %.300q", stdout.String())
	}
}

// waitLog waits (at most 10 s) for s to appear in log.
func waitLog(t *testing.T, log *syncBuffer, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(log.String(), s); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in:\n%.3000s", s, log.String())
		}
	}
}

func TestServeTelemetryUsageErrors(t *testing.T) {
	r := runEnv(t, []string{"OTEL_TRACES_EXPORTER=zipkin"}, "", "serve", "--listen", "tcp://127.0.0.1:0")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "OTEL_TRACES_EXPORTER=zipkin") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = run(t, "", "serve", "--listen", "tcp://127.0.0.1:0", "--metrics", "ftp://x/")
	expect(t, r, exitUsage, "")
	if !strings.Contains(r.stderr, "--metrics") {
		t.Errorf("stderr %q", r.stderr)
	}
}
