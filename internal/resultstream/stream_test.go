package resultstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// recorder is a Writer that keeps each piece written.
type recorder struct {
	pieces  []string
	closed  bool
	aborted error
	fail    error // what Write returns
}

func (r *recorder) Write(p []byte) error {
	if r.fail != nil {
		return r.fail
	}
	r.pieces = append(r.pieces, string(p))
	return nil
}
func (r *recorder) Close() error      { r.closed = true; return nil }
func (r *recorder) Abort(cause error) { r.aborted = cause }

func TestEncoderGathersUnderAChunk(t *testing.T) {
	opened := 0
	e := Encoder{Buf: []byte("head["), Chunk: 1 << 10, Open: func() (Writer, error) { opened++; return &recorder{}, nil }}
	for i := range 3 {
		if err := e.Elem(i); err != nil {
			t.Fatal(err)
		}
	}
	if opened != 0 || e.Opened() || string(e.Buf) != "head[0,1,2" {
		t.Fatalf("a small result: opened %d times, buffer %q", opened, e.Buf)
	}
}

func TestEncoderWritesInChunks(t *testing.T) {
	rec := &recorder{}
	e := Encoder{Buf: []byte("["), Chunk: 10, Open: func() (Writer, error) { return rec, nil }}
	for i := range 10 {
		if err := e.Elem(fmt.Sprint(i)); err != nil { // "0" is 3 bytes encoded
			t.Fatal(err)
		}
	}
	if err := e.End("]"); err != nil {
		t.Fatal(err)
	}
	whole := strings.Join(rec.pieces, "")
	if whole != `["0","1","2","3","4","5","6","7","8","9"]` || !rec.closed {
		t.Fatalf("written %q (closed %v)", whole, rec.closed)
	}
	if len(rec.pieces) < 3 {
		t.Fatalf("written in %d pieces, want one per chunk", len(rec.pieces))
	}
	for _, p := range rec.pieces[:len(rec.pieces)-1] {
		if len(p) < 10 || len(p) > 10+4 {
			t.Errorf("a piece of %d bytes for a chunk of 10: %q", len(p), p)
		}
	}
}

func TestEncoderNotIncremental(t *testing.T) {
	e := Encoder{Buf: []byte("["), Chunk: 4, Open: func() (Writer, error) { return nil, framing.ErrNotIncremental }}
	for i := range 5 {
		if err := e.Elem(i); err != nil {
			t.Fatal(err)
		}
	}
	if e.Opened() || e.WriteFailed() || string(e.Buf) != "[0,1,2,3,4" {
		t.Fatalf("a channel that cannot write in pieces: opened %v, failed %v, %q", e.Opened(), e.WriteFailed(), e.Buf)
	}
}

func TestEncoderElemError(t *testing.T) {
	e := Encoder{Buf: []byte("["), Chunk: 1 << 10}
	if err := e.Elem(1); err != nil {
		t.Fatal(err)
	}
	err := e.Elem(make(chan int))
	var ee *ElemError
	if !errors.As(err, &ee) || ee.N != 1 || ee.Unwrap() == nil {
		t.Fatalf("an element that cannot be encoded: %v", err)
	}
	if string(e.Buf) != "[1" {
		t.Fatalf("the failed element left %q", e.Buf)
	}
	if e.WriteFailed() {
		t.Fatal("an encoding error taken for a failed write")
	}
}

func TestEncoderWriteFails(t *testing.T) {
	gone := errors.New("peer gone")
	rec := &recorder{fail: gone}
	var told []error // what Failed heard
	e := Encoder{Buf: []byte("["), Chunk: 2, Open: func() (Writer, error) { return rec, nil }, Failed: func(err error) { told = append(told, err) }}
	if err := e.Elem(12345); !errors.Is(err, gone) || !e.Opened() || !e.WriteFailed() || len(told) != 1 || told[0] != gone {
		t.Fatalf("a failed write: %v, opened %v, failed %v, Failed told %v", err, e.Opened(), e.WriteFailed(), told)
	}
	e = Encoder{Buf: []byte("["), Chunk: 2, Open: func() (Writer, error) { return nil, gone }, Failed: func(err error) { told = append(told, err) }}
	if err := e.Elem(12345); !errors.Is(err, gone) || e.Opened() || !e.WriteFailed() || len(told) != 1 {
		t.Fatalf("a failed open (the caller's to handle, not Failed's): %v, opened %v, failed %v, Failed told %v", err, e.Opened(), e.WriteFailed(), told)
	}
}

func TestResultLoop(t *testing.T) {
	var got []string
	r := &Result{Method: "m", Each: func(elem []byte) (bool, error) {
		got = append(got, string(elem))
		return len(got) < 2, nil
	}}
	err := r.Decode([]byte(`[1, "a", {}]`), true)
	if !errors.Is(err, ErrStopped) || !r.Stopped || !r.Strict || strings.Join(got, " ") != `1 "a"` {
		t.Fatalf("a loop that breaks off after two: %v, stopped %v, strict %v, %q", err, r.Stopped, r.Strict, got)
	}
	if err := r.Decode([]byte(`[1]`), false); !errors.Is(err, ErrCalledTwice) {
		t.Fatalf("read again after elements went to the loop: %v", err)
	}
	r = &Result{Method: "m", Each: func([]byte) (bool, error) { return true, nil }}
	if err := r.UnmarshalJSON([]byte(`{"a":1}`)); !errors.Is(err, ErrInvalidResponse) || !strings.Contains(err.Error(), "not an array") {
		t.Fatalf("an object result: %v", err)
	}
	boom := errors.New("does not decode")
	r = &Result{Method: "m", Each: func([]byte) (bool, error) { return false, boom }}
	if err := r.Decode([]byte(`[1]`), false); !errors.Is(err, boom) || r.Stopped {
		t.Fatalf("an element that does not decode: %v (stopped %v)", err, r.Stopped)
	}
}

func TestReadResponseMembers(t *testing.T) {
	readResult := func(dec *jsontext.Decoder) error { _, err := dec.ReadValue(); return err }
	for _, c := range []struct {
		body string
		want error // nil: no error
		text string
	}{
		{`{"jsonrpc":"2.0","id":7,"result":[]}`, nil, ""},
		{`{"result":[],"id":null,"jsonrpc":"2.0"}`, nil, ""},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`, errRPC, ""},
		{`{"jsonrpc":"2.0","id":8,"result":[]}`, ErrInvalidResponse, "does not match"},
		{`{"jsonrpc":"1.0","id":7,"result":[]}`, ErrInvalidResponse, `"jsonrpc" is not "2.0"`},
		{`{"jsonrpc":"2.0","id":7,"Result":[]}`, ErrInvalidResponse, "unknown member"},
		{`{"jsonrpc":"2.0","id":7}`, ErrInvalidResponse, "neither result nor error"},
		{`{"jsonrpc":"2.0","id":7,"result":[]} {}`, ErrInvalidResponse, "more data"},
		{`[]`, ErrInvalidResponse, "not a JSON object"},
	} {
		err := ReadResponse(jsontext.NewDecoder(strings.NewReader(c.body)), "7", readResult, errorObject)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) || err != nil && !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %v (%q)", c.body, err, c.want, c.text)
		}
	}
	invalidErr := func([]byte) error { return nil }
	err := ReadResponse(jsontext.NewDecoder(strings.NewReader(`{"id":7,"error":5}`)), "7", readResult, invalidErr)
	if !errors.Is(err, ErrInvalidResponse) {
		t.Errorf("an invalid error object: %v", err)
	}
}

func TestLimitReaderPerElement(t *testing.T) {
	tooLarge := errors.New("too large")
	l := &LimitReader{R: bytes.NewReader(bytes.Repeat([]byte("x"), 100)), Limit: 10, Err: tooLarge}
	buf := make([]byte, 8)
	for range 2 {
		if _, err := l.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Read(buf); !errors.Is(err, tooLarge) {
		t.Fatalf("16 bytes read over a limit of 10, then: %v", err)
	}
	l.Reset()
	if _, err := io.ReadFull(l, buf); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
}
