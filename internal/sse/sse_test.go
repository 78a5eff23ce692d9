package sse

import (
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type sseResult struct {
	events []Event
	LastID string
	Retry  time.Duration
	err    error
}

func readSSE(r io.Reader, limit int) sseResult {
	sr := NewReader(r, limit)
	var res sseResult
	for {
		ev, err := sr.Next()
		if err != nil {
			res.err = err
			break
		}
		ev.Data = append([]byte(nil), ev.Data...)
		res.events = append(res.events, ev)
	}
	res.LastID, res.Retry = sr.LastID, sr.Retry
	return res
}

var sseLineEnd = regexp.MustCompile("\r\n|\r|\n")

// referenceSSE is a second, plain reading of the event stream
// interpretation (WHATWG HTML 9.2.6), for the fuzz target to compare with:
// it splits the whole text into lines first.
func referenceSSE(text string) sseResult {
	text = strings.TrimPrefix(text, "\ufeff")
	var res sseResult
	lines := sseLineEnd.Split(text, -1)
	// The piece after the last line end is not a line; an event still
	// open at the end of the stream is discarded.
	cut := lines[len(lines)-1] != ""
	lines = lines[:len(lines)-1]
	partial := false
	var data, typ string
	for _, line := range lines {
		if line == "" {
			if data != "" {
				res.events = append(res.events, Event{Type: typ, Data: []byte(data[:len(data)-1])})
			}
			data, typ, partial = "", "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		partial = true
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			typ = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.Contains(value, "\x00") {
				res.LastID = value
			}
		case "retry":
			if n, err := strconv.ParseUint(value, 10, 31); err == nil {
				res.Retry = time.Duration(n) * time.Millisecond
			}
		}
	}
	res.err = io.EOF
	if partial || cut {
		res.err = io.ErrUnexpectedEOF
	}
	return res
}

func sameEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || string(a[i].Data) != string(b[i].Data) {
			return false
		}
	}
	return true
}

func TestSSEReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Event
		LastID   string
		Retry    time.Duration
		err      error
	}{
		{"our framing", "event: message\ndata: {\"a\":1}\n\n", []Event{{"message", []byte(`{"a":1}`)}}, "", 0, io.EOF},
		{"multi-line data", "data: one\ndata:two\ndata\ndata:  three\n\n", []Event{{"", []byte("one\ntwo\n\n three")}}, "", 0, io.EOF},
		{"CRLF and CR line ends", "data: a\r\n\r\ndata: b\r\rdata: c\n\n", []Event{{"", []byte("a")}, {"", []byte("b")}, {"", []byte("c")}}, "", 0, io.EOF},
		{"comments and unknown fields", ": keep-alive\nfoo: bar\ndata: x\n: between\n\n", []Event{{"", []byte("x")}}, "", 0, io.EOF},
		{"id and retry persist", "id: 7\nretry: 250\ndata: x\n\nid\ndata: y\n\nretry: soon\n", []Event{{"", []byte("x")}, {"", []byte("y")}}, "", 250 * time.Millisecond, io.ErrUnexpectedEOF},
		{"id with NUL ignored", "id: 1\n\nid: a\x00b\ndata: x\n\n", []Event{{"", []byte("x")}}, "1", 0, io.EOF},
		{"no data: not dispatched, type reset", "event: other\n\ndata: x\n\n", []Event{{"", []byte("x")}}, "", 0, io.EOF},
		{"BOM skipped once", "\ufeffdata: x\n\n", []Event{{"", []byte("x")}}, "", 0, io.EOF},
		{"cut event discarded", "data: x\n\ndata: y\n", []Event{{"", []byte("x")}}, "", 0, io.ErrUnexpectedEOF},
		{"cut line discarded", "data: x\n\ndata: y", []Event{{"", []byte("x")}}, "", 0, io.ErrUnexpectedEOF},
		{"colon in value", "data: a:b: c\n\n", []Event{{"", []byte("a:b: c")}}, "", 0, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in))} {
				got := readSSE(r, 1<<20)
				if !sameEvents(got.events, tc.want) || got.LastID != tc.LastID || got.Retry != tc.Retry || got.err != tc.err {
					t.Fatalf("got %+v, want events %+v id %q retry %v err %v", got, tc.want, tc.LastID, tc.Retry, tc.err)
				}
			}
		})
	}
}

// An event over the limit ends the stream with ErrEventTooLarge (the root
// package makes it match ErrMessageTooLarge); the events before it are read.
func TestSSEReaderLimit(t *testing.T) {
	in := "data: small\n\ndata: " + strings.Repeat("x", 100) + "\n\ndata: after\n\n"
	got := readSSE(strings.NewReader(in), 64)
	if len(got.events) != 1 || !errors.Is(got.err, ErrEventTooLarge) {
		t.Fatalf("got %+v", got)
	}
	// The limit counts every line of an event, not one line.
	in = strings.Repeat("data: xxxxxxxxxx\n", 10) + "\n"
	if got := readSSE(strings.NewReader(in), 64); len(got.events) != 0 || !errors.Is(got.err, ErrEventTooLarge) {
		t.Fatalf("many lines: %+v", got)
	}
	// Comments count too: an endless comment cannot grow memory.
	if got := readSSE(strings.NewReader(":"+strings.Repeat("c", 1000)+"\n"), 64); !errors.Is(got.err, ErrEventTooLarge) {
		t.Fatalf("long comment: %+v", got)
	}
}

// FuzzSSE reads random streams whole and one byte at a time (line ends and
// the BOM split across reads) and compares both with the plain reference
// reading; with a small limit, the events read are a prefix of the
// reference's and the error says the event was too large.
//
//	go test -run='^$' -fuzz=FuzzSSE -fuzztime=60s .
func FuzzSSE(f *testing.F) {
	for _, s := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\n",
		"data: a\r\n\r\ndata: b\r\rdata: c\n\n",
		"\ufeff: comment\nid: 1\nretry: 10\ndata: x\ndata:y\n\n",
		"data\n\nevent\n\nid\x00\n\n\r\n\r",
		"id: a\x00b\nretry: -1\nretry: 99999999999\ndata: z\r",
		"\xef\xbb",
		"data: " + strings.Repeat("x", 80) + "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := referenceSSE(string(in))
		for _, r := range []io.Reader{strings.NewReader(string(in)), iotest.OneByteReader(strings.NewReader(string(in)))} {
			got := readSSE(r, 1<<20)
			if !sameEvents(got.events, want.events) || got.LastID != want.LastID || got.Retry != want.Retry || got.err != want.err {
				t.Fatalf("%q:\ngot  %+v\nwant %+v", in, got, want)
			}
		}
		small := readSSE(strings.NewReader(string(in)), 32)
		if small.err != want.err && !errors.Is(small.err, ErrEventTooLarge) {
			t.Fatalf("limit: %q: %v", in, small.err)
		}
		if len(small.events) > len(want.events) || !sameEvents(small.events, want.events[:len(small.events)]) {
			t.Fatalf("limit: %q: events %+v not a prefix of %+v", in, small.events, want.events)
		}
		for _, ev := range small.events {
			if len(ev.Data) > 32 {
				t.Fatalf("limit: an event of %d bytes", len(ev.Data))
			}
		}
	})
}
