package jsonrpc

// Fuzz targets for the decoder/dispatcher and each stream framing. Their
// seed corpora (testdata/fuzz/Fuzz*) run as ordinary tests; run a target
// for longer with, e.g.:
//
//	go test -run='^$' -fuzz=FuzzProcess -fuzztime=60s .

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// fuzzSeeds returns every message of the rule tables, as seeds.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	all := allRules()
	for _, group := range slices.Sorted(maps.Keys(all)) {
		for _, r := range all[group] {
			seeds = append(seeds, []byte(r.req))
		}
	}
	for _, b := range batchRules() {
		seeds = append(seeds, []byte(b.req))
	}
	return seeds
}

func fuzzServer() *Server {
	return &Server{Handler: rulesMux(), MaxBatchLen: 50, MaxDepth: 64, MaxMethodLen: 64, Logger: quietLogger}
}

// checkReply checks a reply of process against the response invariants and
// returns its responses.
func checkReply(t *testing.T, data, reply []byte) []resp {
	t.Helper()
	if reply == nil {
		return nil
	}
	if !jsontext.Value(reply).IsValid() {
		t.Fatalf("reply is not valid JSON: %q (to %q)", reply, data)
	}
	var objs []jsontext.Value
	if reply[0] == '[' {
		if err := jsonv2.Unmarshal(reply, &objs); err != nil || len(objs) == 0 {
			t.Fatalf("bad batch reply %q (to %q)", reply, data)
		}
	} else {
		objs = []jsontext.Value{reply}
	}
	var out []resp
	for _, o := range objs {
		if err := validResponseObject(o); err != nil {
			t.Fatalf("%v: %q (to %q)", err, o, data)
		}
		var r resp
		jsonv2.Unmarshal(o, &r)
		out = append(out, r)
	}
	return out
}

func FuzzProcess(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	// Past MaxDepth (64) the scan goes on without recursion: valid and
	// invalid variants, for the fuzzer to mutate.
	deep := strings.Repeat(`[{"a":`, 40) + `[1,"x",{}]` + strings.Repeat("}]", 40)
	f.Add([]byte(deep))
	f.Add([]byte(deep[:len(deep)-1] + "}"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"echo","id":1,"params":` + deep + "}"))
	srv := fuzzServer()
	f.Fuzz(func(t *testing.T, data []byte) {
		reply := dispatchBytes(srv, data)
		rs := checkReply(t, data, reply)

		// Agreement with jsontext on what is valid JSON. Duplicate names
		// are valid JSON to the scanner (they are rejected later as -32600
		// or -32602), so jsontext is told to allow them.
		valid := jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true))
		parseErr := len(rs) == 1 && reply[0] == '{' && rs[0].Error != nil && rs[0].Error.Code == CodeParseError
		depthErr := len(rs) == 1 && reply[0] == '{' && rs[0].Error != nil && strings.Contains(rs[0].Error.Message, "depth")
		switch {
		case valid && parseErr:
			t.Fatalf("valid JSON answered with a parse error: %q → %s", data, reply)
		case !valid && !parseErr:
			// Even nested past MaxDepth: the scan goes on to tell.
			t.Fatalf("invalid JSON not answered with a parse error: %q → %q", data, reply)
		}
		if parseErr || depthErr {
			if string(rs[0].ID) != "null" {
				t.Fatalf("parse error with id %s", rs[0].ID)
			}
			return
		}
		// A single request object: the reply echoes its id byte for byte,
		// and no reply means a notification (a request without an id).
		if !valid || bytes.TrimSpace(data)[0] != '{' {
			return
		}
		var env map[string]jsontext.Value
		if jsonv2.Unmarshal(data, &env, jsonv2.RejectUnknownMembers(false)) != nil {
			return // duplicate names: answered as checked above
		}
		id, hasID := env["id"]
		switch {
		case reply == nil && hasID:
			t.Fatalf("request with id %s got no reply: %q", id, data)
		case reply != nil && hasID && (id.Kind() == '"' || id.Kind() == '0' || id.Kind() == 'n'):
			if string(rs[0].ID) != string(id) {
				t.Fatalf("id %s echoed as %s", id, rs[0].ID)
			}
		case reply != nil && !hasID && rs[0].Error == nil:
			t.Fatalf("a notification got a result: %q → %s", data, reply)
		}
	})
}

// dispatchBytes runs data through the shared dispatcher.
func dispatchBytes(srv *Server, data []byte) []byte {
	return srv.Process(context.Background(), bytes.Clone(data))
}

// chunkReader returns its data in chunks of varying sizes, then EOF.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)])%97 + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func (r *chunkReader) Write(p []byte) (int, error) { return len(p), nil }
func (r *chunkReader) Close() error                { return nil }

// cutReader is a chunkReader whose reads are also cut, as InterruptRecv
// cuts them: a size with its high bit set makes that read fail with a
// passed deadline instead.
type cutReader struct {
	chunkReader
	s       *framing.Stream
	justCut bool // a read after a cut goes through
}

func (r *cutReader) Read(p []byte) (int, error) {
	if !r.justCut && len(r.sizes) > 0 && r.sizes[r.i%len(r.sizes)]&0x80 != 0 && len(r.data) > 0 {
		r.justCut = true
		r.s.InterruptRecv() // SetReadDeadline does nothing: the read fails below
		return 0, os.ErrDeadlineExceeded
	}
	r.justCut = false
	return r.chunkReader.Read(p)
}

func (r *cutReader) SetReadDeadline(time.Time) error { return nil }

// wholeReader returns as much of its data as fits, then EOF.
type wholeReader struct{ bytes.Reader }

func (r *wholeReader) Write(p []byte) (int, error) { return len(p), nil }
func (r *wholeReader) Close() error                { return nil }

// recvAll reads every message of a stream over data and checks the
// framing's promises: it ends (no hang), no message is over the limit or
// larger than the input, line messages hold no newline; and what comes out
// does not depend on how the input was cut, nor on reads interrupted
// anywhere in it (the same stream read whole gives the same messages).
// newLimitedStream is NewStream's channel with the size limit a Conn's
// Server would give it, for tests that read it without a Conn.
func newLimitedStream(rwc io.ReadWriteCloser, f Framing, limit int64) stream {
	st := NewStream(rwc, StreamOptions{Framing: f}).(stream)
	st.setLimits(limit, 0)
	return st
}

func recvAll(t *testing.T, framing Framing, data, sizes []byte) {
	cut := &cutReader{chunkReader: chunkReader{data: data, sizes: sizes}}
	ch := newLimitedStream(cut, framing, 256)
	cut.s = ch.Stream
	got := recvOutcomes(t, ch, framing, len(data), true)
	whole := &wholeReader{}
	whole.Reset(data)
	want := recvOutcomes(t, newLimitedStream(whole, framing, 256), framing, len(data), false)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("cut and interrupted input read as\n%q\nwhole as\n%q", got, want)
	}
}

// recvOutcomes reads ch to its end and lists what each Recv gave.
func recvOutcomes(t *testing.T, ch Channel, framing Framing, size int, cut bool) []string {
	const limit = 256
	var out []string
	total := 0
	for i := 0; ; i++ {
		if i > 2*size+4 {
			t.Fatalf("more than %d results from %d bytes", i, size)
		}
		msg, err := ch.Recv()
		if err != nil {
			if cut && errors.Is(err, ErrRecvInterrupted) {
				continue
			}
			var fe *FrameError
			if errors.As(err, &fe) {
				if fe.Code != CodeParseError && fe.Code != CodeInvalidRequest {
					t.Fatalf("frame error with code %d", fe.Code)
				}
				out = append(out, "error "+strconv.FormatInt(fe.Code, 10)+" "+strconv.FormatBool(fe.Fatal))
				if !fe.Fatal {
					continue
				}
				return append(out, "framing "+Framing(ch.(stream).Framing()).String())
			}
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("unexpected error %v", err)
			}
			return append(out, err.Error(), "framing "+Framing(ch.(stream).Framing()).String())
		}
		if len(msg) > limit || (len(msg) == 0 && framing == FramingLine) {
			t.Fatalf("message of %d bytes (limit %d)", len(msg), limit)
		}
		if framing == FramingLine && bytes.IndexByte(msg, '\n') >= 0 {
			t.Fatalf("line message holds a newline: %q", msg)
		}
		total += len(msg)
		if total > size {
			t.Fatalf("%d message bytes from %d input bytes", total, size)
		}
		out = append(out, string(msg))
		// Messages are owned by the caller: the next Recv must not change them.
		if len(msg) > 0 {
			msg[0] ^= 0xff
		}
	}
}

func FuzzLineFraming(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(append(s, '\n'), []byte{3})
	}
	f.Add([]byte("a\r\n\r\n  \nb\nc"), []byte{0, 1, 2})
	f.Add([]byte(strings.Repeat("x", 300)+"\nok\n"), []byte{50})
	f.Add([]byte(strings.Repeat("x", 300)+"\r\n{}\r\n"), []byte{0x9f, 3}) // reads cut while skipping
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		recvAll(t, FramingLine, data, sizes)
	})
}

func FuzzHeaderFraming(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte("Content-Length: "+strconv.Itoa(len(s))+"\r\n\r\n"+string(s)), []byte{7}, false)
	}
	f.Add([]byte("Content-Length: 2\r\n\r\n{}\r\nContent-Length: 2\n\n[]"), []byte{1}, true)
	f.Add([]byte("Content-Length: 12\r\nX: y\r\n\r\n{\"id\":[1,2]}Content-Length: 2\r\n\r\n{}"), []byte{0x83, 2}, false) // reads cut
	f.Add([]byte("content-length: 300\r\n\r\n"+strings.Repeat("x", 300)), []byte{96}, false)
	f.Add([]byte("Content-Length: -1\r\n\r\n"), []byte{}, false)
	f.Add([]byte("X: y\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"), []byte{}, true)
	f.Fuzz(func(t *testing.T, data, sizes []byte, auto bool) {
		framing := FramingHeader
		if auto {
			framing = FramingAuto
		}
		recvAll(t, framing, data, sizes)
	})
}

// FuzzAutoFraming: the auto framing picks the header framing only for a
// header name, whatever JSON text or garbage comes first, and the choice
// and the messages read do not depend on how the input is cut into reads.
func FuzzAutoFraming(f *testing.F) {
	for i, s := range fuzzSeeds() {
		if i%4 == 0 {
			f.Add(append(bytes.Clone(s), '\n'), []byte{byte(i)})
		}
	}
	for _, s := range []string{
		"42\n{}\n", "null\n", "\"x\"\n", "true\n", "garbage\n{}\n", "\x00\n", "\xef\xbb\xbf{}\n",
		"\xef\xbb\xbfContent-Length: 2\r\n\r\n{}", "  \r\n\tContent-Length: 2\r\n\r\n{}",
		"content-type: x\r\nContent-Length: 2\r\n\r\n{}", "CONTENT-LENGTH:2\n\n[]", "Content-Lengthy: 2\n{}\n",
		"Content-Length 2\r\n\r\n{}", "Content-\n", "Content-Typ", strings.Repeat("x", 300) + "\n{}\n",
		"X-Junk: " + strings.Repeat("a", 9<<10), "X-Junk: " + strings.Repeat("a", 4<<10) + "\n{}\n", strings.Repeat("1", 9<<10) + "\n",
	} {
		f.Add([]byte(s), []byte{1})
		f.Add([]byte(s), []byte{0x80, 2, 0x81, 5})
	}
	f.Fuzz(func(t *testing.T, data, sizes []byte) {
		recvAll(t, FramingAuto, data, sizes)
		// The choice itself: a header only when the first bytes (after
		// white space and a byte-order mark) are a header name.
		ch := newLimitedStream(&chunkReader{data: bytes.Clone(data), sizes: sizes}, FramingAuto, 256)
		ch.Recv() // detects first
		start := bytes.TrimPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(wire.BOM))
		isHeader := false
		for _, name := range []string{"content-length:", "content-type:"} {
			isHeader = isHeader || len(start) >= len(name) && strings.EqualFold(string(start[:len(name)]), name)
		}
		// Or a header-like line ("Name:") with no newline in a header section's bound (8 KiB).
		if name, _, ok := bytes.Cut(start, []byte(":")); ok && len(start) > 8<<10 && headerLikeName.Match(name) {
			isHeader = isHeader || bytes.IndexByte(start[:8<<10+1], '\n') < 0
		}
		if want := map[bool]Framing{false: FramingLine, true: FramingHeader}[isHeader]; Framing(ch.Framing()) != want && len(bytes.TrimSpace(data)) > 0 {
			t.Fatalf("%q read as %v framing", data, Framing(ch.Framing()))
		}
	})
}

// headerLikeName matches a header field's name (an HTTP token).
var headerLikeName = regexp.MustCompile("^[-!#$%&'*+.^_`|~0-9A-Za-z]+$")

// TestWriteFuzzSeeds writes the seeds above as corpus files under
// testdata/fuzz when JSONRPC_WRITE_FUZZ_SEEDS is set (the corpus is kept
// in the repository; crashers found by fuzzing are added next to them).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("JSONRPC_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set JSONRPC_WRITE_FUZZ_SEEDS=1 to rewrite the seed corpus")
	}
	write := func(target, name string, args ...string) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		content := "go test fuzz v1\n" + strings.Join(args, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lit := func(b []byte) string { return "[]byte(" + strconv.Quote(string(b)) + ")" }
	for i, s := range fuzzSeeds() {
		n := strconv.Itoa(i)
		write("FuzzProcess", n, lit(s))
		if i%8 != 0 {
			continue // the framings get a sample: the messages matter less to them
		}
		twice := append(append(bytes.Clone(s), '\n'), s...)
		write("FuzzConn", n, lit(twice), lit([]byte{byte(i)}), "bool("+strconv.FormatBool(i%16 == 0)+")")
		write("FuzzLineFraming", n, lit(append(bytes.Clone(s), '\n')), lit([]byte{byte(i)}))
		framed := []byte("Content-Length: " + strconv.Itoa(len(s)) + "\r\n\r\n" + string(s))
		write("FuzzHeaderFraming", n, lit(framed), lit([]byte{byte(i)}), "bool("+strconv.FormatBool(i%2 == 0)+")")
	}
}

// connRWC feeds a Conn its input in chunks and records its output.
type connRWC struct {
	chunkReader
	out bytes.Buffer
	mu  chan struct{}
}

func (c *connRWC) Write(p []byte) (int, error) {
	c.mu <- struct{}{}
	defer func() { <-c.mu }()
	return c.out.Write(p)
}

// FuzzConn runs arbitrary stream bytes through a whole Conn (framing,
// dispatch, handlers, replies): it must end once the input ends, and every
// line it writes must be a valid response or batch of responses.
func FuzzConn(f *testing.F) {
	for i, s := range fuzzSeeds() {
		if i%4 == 0 {
			f.Add(append(append(bytes.Clone(s), '\n'), s...), []byte{byte(i)}, i%8 == 0)
		}
	}
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"), []byte{5}, true)
	srv := fuzzServer()
	srv.MaxConcurrency = 2
	srv.MaxMessageSize = 512
	f.Fuzz(func(t *testing.T, data, sizes []byte, auto bool) {
		framing := FramingLine
		if auto {
			framing = FramingAuto
		}
		rwc := &connRWC{chunkReader: chunkReader{data: bytes.Clone(data), sizes: sizes}, mu: make(chan struct{}, 1)}
		conn := NewConn(NewStream(rwc, StreamOptions{Framing: framing}), srv)
		select {
		case <-conn.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("the conn did not end after its input: %q", data)
		}
		out := rwc.out.Bytes()
		for len(out) > 0 {
			var msg []byte
			if bytes.HasPrefix(out, []byte("Content-Length: ")) {
				hdr, rest, ok := bytes.Cut(out, []byte("\r\n\r\n"))
				if !ok {
					t.Fatalf("bad output framing %q", out)
				}
				n, err := strconv.Atoi(string(hdr[len("Content-Length: "):]))
				if err != nil || n > len(rest) {
					t.Fatalf("bad output header %q", hdr)
				}
				msg, out = rest[:n], rest[n:]
			} else {
				var ok bool
				msg, out, ok = bytes.Cut(out, []byte("\n"))
				if !ok {
					t.Fatalf("output line without newline: %q", msg)
				}
			}
			checkReply(t, data, msg)
		}
	})
}
