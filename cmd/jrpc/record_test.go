package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exchange sends each line on one TCP connection, waiting for the answer
// of each request before the next line (so the order is fixed).
func exchange(t *testing.T, addr string, lines []string) []string {
	t.Helper()
	c, rd := lineConn(t, addr)
	var got []string
	for _, l := range lines {
		io.WriteString(c, l+"\n")
		if len(messageIDs([]byte(l), false)) == 0 {
			continue // a notification
		}
		s, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, strings.TrimSuffix(s, "\n"))
	}
	return got
}

func TestRecordReplayByteForByte(t *testing.T) {
	file := filepath.Join(t.TempDir(), "session.jsonl")
	requests := []string{
		`{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}`,
		`{"jsonrpc":"2.0","method":"notify_hello","params":[7]}`,
		`{"method":"echo","params":{"z":1,"a":[1.50,"\u00e9"]},"id":"s","jsonrpc":"2.0"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"sum","params":[1,2]},{"jsonrpc":"2.0","id":3,"method":"nope"}]`,
		`{"jsonrpc":"2.0","id":4,"method":"sleep","params":{"ms":-1}}`,
	}
	rec, recCmd := startListening(t, nil, "record", "--listen", "tcp://127.0.0.1:0", "--out", file, urls["tcp"])
	original := exchange(t, rec, requests)
	recCmd.Process.Kill()
	recCmd.Wait()

	// The file holds every message, both ways, exactly.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var sent, answered []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var l recordLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Time.IsZero() || l.Conn != 1 {
			t.Fatalf("line %s: %v", sc.Bytes(), err)
		}
		if !bytes.Contains(sc.Bytes(), []byte(`"message":`+string(l.Message)+`}`)) {
			t.Fatalf("message not kept as it was: %s", sc.Bytes())
		}
		if l.From == "client" {
			sent = append(sent, string(l.bytes()))
		} else {
			answered = append(answered, string(l.bytes()))
		}
	}
	if strings.Join(sent, "\n") != strings.Join(requests, "\n") || strings.Join(answered, "\n") != strings.Join(original, "\n") {
		t.Fatalf("recorded\n%s\n%s\nwant\n%s\n%s", sent, answered, requests, original)
	}

	// Replayed: the same answers, byte for byte, without the server.
	rp, _ := startListening(t, nil, "replay", file, "--listen", "tcp://127.0.0.1:0")
	if got := exchange(t, rp, requests); strings.Join(got, "\n") != strings.Join(original, "\n") {
		t.Fatalf("replayed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(original, "\n"))
	}
	// Another id gets the same answer with its id; params match as JSON
	// values (member order, spacing).
	got := exchange(t, rp, []string{`{"jsonrpc":"2.0","id":"other","method":"echo","params":{"a":[1.50,"\u00e9"], "z":1}}`})
	if want := strings.Replace(original[1], `"id":"s"`, `"id":"other"`, 1); got[0] != want {
		t.Fatalf("got %s, want %s", got[0], want)
	}
	// Through jrpc call, over stdio; what was not recorded is an error.
	expect(t, run(t, "", "--exec", bin+" replay "+file, "call", "subtract", "[42,23]"), 0, "19\n")
	// Params compare as JSON values: 42.0 and 4.2e1 are the 42 recorded (issue 28, point 9).
	expect(t, run(t, "", "--exec", bin+" replay "+file, "call", "subtract", "[42.0,2.3e1]"), 0, "19\n")
	r := run(t, "", "--exec", bin+" replay "+file, "call", "subtract", "[1,1]")
	if r.code != exitRPCError || !strings.Contains(r.stderr, `"code":-32602,"message":"no recorded call of subtract with these params","data":{"recorded_params":[[42,23]]}`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, "", "--exec", bin+" replay "+file, "call", "get_data")
	if r.code != exitRPCError || !strings.Contains(r.stderr, `-32601`) {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}

	// record never overwrites a file.
	r = run(t, "", "record", "--listen", "tcp://127.0.0.1:0", "--out", file, urls["tcp"])
	expect(t, r, exitUsage, "")
	if after, _ := os.ReadFile(file); !bytes.Equal(after, data) || !strings.Contains(r.stderr, "exists already") {
		t.Fatalf("stderr %q; file changed: %v", r.stderr, !bytes.Equal(after, data))
	}
	expect(t, run(t, "", "replay", filepath.Join(t.TempDir(), "none.jsonl")), exitUsage, "")
}
