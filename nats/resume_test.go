package nats_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/sse"
	jnats "github.com/seedhq/jsonrpc/nats"
)

// resumeInstance is one instance of a Streamable HTTP server on its own
// NATS connection, its sessions and events in the JetStream stores all
// instances share; its "slow" handler notifies "one", waits for release,
// notifies "two" and "three" and answers "done". It returns the
// instance's URL and its JetStream context.
func resumeInstance(t *testing.T, ns *natsserver.Server, release <-chan struct{}) (string, jetstream.JetStream) {
	t.Helper()
	js := jsConn(t, ns)
	events, err := jnats.NewEventStore(t.Context(), js, jnats.EventStoreConfig{Stream: "RESUME", Subject: "resume"})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := jnats.NewSessionStore(t.Context(), js, jnats.SessionStoreConfig{Bucket: "resume_sessions"})
	if err != nil {
		t.Fatal(err)
	}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		if err := c.Notify(ctx, "note", []string{"one"}); err != nil {
			return "", err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		for _, n := range []string{"two", "three"} {
			if err := c.Notify(ctx, "note", []string{n}); err != nil {
				return "", err
			}
		}
		return "done", nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	hs := httptest.NewServer(srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, EventStore: events, SessionStore: sessions, KeepAlive: 200 * time.Millisecond,
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL, js
}

func resumeRequest(t *testing.T, method, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if method == http.MethodGet {
		_, last, _ := strings.Cut(body, "Last-Event-ID: ")
		req.Body, req.ContentLength = nil, 0
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// resumeCut initializes a session on a, POSTs "slow" there, reads its
// stream up to note one and closes it: the session and the last event id.
func resumeCut(t *testing.T, a string) (session, last string) {
	t.Helper()
	resp := resumeRequest(t, http.MethodPost, a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	resp.Body.Close()
	if session = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s", resp.Status)
	}
	resp = resumeRequest(t, http.MethodPost, a, session, `{"jsonrpc":"2.0","id":7,"method":"slow"}`)
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("the POST's stream ended before note one: %v", err)
		}
		if strings.Contains(string(ev.Data), `"one"`) {
			return session, r.LastID
		}
	}
}

// resumeRead reads a resumed stream's messages until it ends (10 s at most).
func resumeRead(t *testing.T, resp *http.Response) (ids, msgs []string) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", resp.Status)
	}
	timer := time.AfterFunc(10*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	r := sse.NewReader(resp.Body, 1<<20)
	for {
		ev, err := r.Next()
		if err != nil {
			return ids, msgs
		}
		if len(ev.Data) > 0 {
			ids, msgs = append(ids, r.LastID), append(msgs, string(ev.Data))
		}
	}
}

// TestJetStreamResumeOtherInstance: two instances, each on its own NATS
// connection, share sessions and events in JetStream. A POST's stream on
// A is cut after its first event; GET with Last-Event-ID on B follows it:
// the events A goes on producing arrive, up to the response, once each.
// Then A loses NATS (as a killed instance would) in a second call: B ends
// that stream after three KeepAlives of silence with -32001.
func TestJetStreamResumeOtherInstance(t *testing.T) {
	ns := runJetStream(t)
	release := make(chan struct{})
	a, _ := resumeInstance(t, ns, release)
	b, _ := resumeInstance(t, ns, release)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the servers close: A's call ends
	session, last := resumeCut(t, a)
	stream, lastSeq, _ := sse.ParseEventID(last)
	resp := resumeRequest(t, http.MethodGet, b, session, "Last-Event-ID: "+last)
	time.AfterFunc(100*time.Millisecond, free)
	ids, msgs := resumeRead(t, resp)
	want := []string{`"two"`, `"three"`, `"id":7,"result":"done"`}
	if len(msgs) != len(want) {
		t.Fatalf("B wrote %q; want two, three and the response, once each", msgs)
	}
	for i, w := range want {
		st, seq, ok := sse.ParseEventID(ids[i])
		if !strings.Contains(msgs[i], w) || !ok || st != stream || seq <= lastSeq {
			t.Fatalf("event %d: %s %s; want %s after %s", i, ids[i], msgs[i], w, last)
		}
		lastSeq = seq
	}

	// A second call on A, cut after note one (it now goes on at once), its
	// instance then cut off from NATS before it stores its end.
	release2 := make(chan struct{})
	a2, ajs2 := resumeInstance(t, ns, release2)
	t.Cleanup(func() { close(release2) })
	session, last = resumeCut(t, a2)
	ajs2.Conn().Close()
	start := time.Now()
	_, msgs = resumeRead(t, resumeRequest(t, http.MethodGet, b, session, "Last-Event-ID: "+last))
	if len(msgs) != 1 || !strings.HasPrefix(msgs[0], `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,`) {
		t.Fatalf("B wrote %q for the call of an instance gone; want one -32001 error", msgs)
	}
	if took := time.Since(start); took < 600*time.Millisecond || took > 8*time.Second {
		t.Fatalf("the error came after %v; want three KeepAlives (600ms)", took)
	}
}

// resumeChildEnv carries the NATS server's URL to TestJetStreamResumeChild.
const resumeChildEnv = "JSONRPC_RESUME_CHILD_NATS"

// TestJetStreamResumeChild is not a test: it is the instance that
// TestJetStreamResumeKilled runs as a process of its own and kills. It
// serves on a loopback port it prints, its sessions and events in the
// NATS server named by resumeChildEnv; its "slow" notifies "one" and
// "two", then never answers.
func TestJetStreamResumeChild(t *testing.T) {
	natsURL := os.Getenv(resumeChildEnv)
	if natsURL == "" {
		t.Skip("a process of TestJetStreamResumeKilled")
	}
	nc, err := natsgo.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	events, err := jnats.NewEventStore(t.Context(), js, jnats.EventStoreConfig{Stream: "RESUME", Subject: "resume"})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := jnats.NewSessionStore(t.Context(), js, jnats.SessionStoreConfig{Bucket: "resume_sessions"})
	if err != nil {
		t.Fatal(err)
	}
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "initialize", func(context.Context, map[string]any) (map[string]string, error) {
		return map[string]string{"protocolVersion": "2025-11-25"}, nil
	})
	jsonrpc.Register(mux, "slow", func(ctx context.Context, _ struct{}) (string, error) {
		c := jsonrpc.ConnFromContext(ctx)
		c.Notify(ctx, "note", []string{"one"})
		c.Notify(ctx, "note", []string{"two"})
		select {} // until killed
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("http://%s\n", l.Addr())
	http.Serve(l, srv.StreamableHTTPHandler(jsonrpc.StreamableHTTPOptions{
		Sessions: true, EventStore: events, SessionStore: sessions, KeepAlive: 200 * time.Millisecond,
	}))
}

// TestJetStreamResumeKilled: instance A, a process of its own, serves a
// call whose stream the client reads up to note one (note two is in
// flight) when A is killed with SIGKILL; GET with Last-Event-ID on
// instance B replays note two, which A stored, then, with nothing more
// stored for three KeepAlives, ends the stream with -32001 for the call.
func TestJetStreamResumeKilled(t *testing.T) {
	ns := runJetStream(t)
	b, _ := resumeInstance(t, ns, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^TestJetStreamResumeChild$")
	cmd.Env = append(os.Environ(), resumeChildEnv+"="+ns.ClientURL())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	a := ""
	for a == "" && lines.Scan() {
		if strings.HasPrefix(lines.Text(), "http://") {
			a = lines.Text()
		}
	}
	if a == "" {
		t.Fatalf("instance A printed no address: %v", lines.Err())
	}
	go io.Copy(io.Discard, out)

	resp := resumeRequest(t, http.MethodPost, a, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	resp = resumeRequest(t, http.MethodPost, a, session, `{"jsonrpc":"2.0","id":7,"method":"slow"}`)
	r := sse.NewReader(resp.Body, 1<<20)
	var one string
	for got := 0; got < 2; {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("A's stream ended before note two: %v", err)
		}
		if len(ev.Data) > 0 {
			got++
		}
		if strings.Contains(string(ev.Data), `"one"`) {
			one = r.LastID // the client lost note two: it resumes after one
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	resp.Body.Close()

	start := time.Now()
	_, msgs := resumeRead(t, resumeRequest(t, http.MethodGet, b, session, "Last-Event-ID: "+one))
	took := time.Since(start)
	if len(msgs) != 2 || !strings.Contains(msgs[0], `"two"`) || !strings.HasPrefix(msgs[1], `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,`) {
		t.Fatalf("B wrote %q after A was killed; want note two (stored by A), then -32001 for the call", msgs)
	}
	if took < 600*time.Millisecond || took > 8*time.Second {
		t.Fatalf("the error came after %v; want three KeepAlives (600ms)", took)
	}
}
