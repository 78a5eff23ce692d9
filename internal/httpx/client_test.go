package httpx

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func response(status int, header http.Header, body []byte, declared bool) *http.Response {
	resp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: -1}
	if declared {
		resp.ContentLength = int64(len(body))
	}
	if resp.Header == nil {
		resp.Header = http.Header{"Content-Type": {"application/json"}}
	}
	return resp
}

func TestReadReply(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"result":null}`)
	zHeader := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}
	for _, tc := range []struct {
		name      string
		resp      *http.Response
		wantReply bool
		want      []byte
		wantErr   string // "" none, "large", or a substring
	}{
		{"reply", response(200, nil, msg, true), true, msg, ""},
		{"chunked", response(200, nil, msg, false), true, msg, ""},
		{"gzip", response(200, zHeader, gzipped(t, msg), false), true, msg, ""},
		{"json-rpc type", response(200, http.Header{"Content-Type": {"application/json-rpc"}}, msg, true), true, msg, ""},
		{"204 for a notification", response(204, nil, nil, true), false, nil, ""},
		{"202 empty for a notification", response(202, nil, []byte(" \n"), false), false, nil, ""},
		{"204 where a reply was due", response(204, nil, nil, true), true, nil, "HTTP 204 with an empty body"},
		{"declared over the limit", response(200, nil, bytes.Repeat([]byte(" "), 101), true), true, nil, "large"},
		{"chunked over the limit", response(200, nil, bytes.Repeat([]byte(" "), 101), false), true, nil, "large"},
		{"gzip bomb", response(200, zHeader, gzipped(t, bytes.Repeat([]byte(" "), 1000)), false), true, nil, "large"},
		{"html", response(200, http.Header{"Content-Type": {"text/html"}}, []byte("<p>hi</p>"), true), true, nil, `Content-Type "text/html", not application/json: <p>hi</p>`},
		{"unknown encoding", response(200, http.Header{"Content-Encoding": {"br"}}, msg, true), true, nil, "the server's reply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var size int64 = -1
			errLarge := errors.New("large")
			got, err := ReadReply(tc.resp, nil, 100, tc.wantReply, func(n int64) error { size = n; return errLarge })
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tc.wantErr == "large" && (err != errLarge || size != 0 && size != 101):
				t.Fatalf("err = %v (size %d), want tooLarge's error", err, size)
			case tc.wantErr != "" && tc.wantErr != "large" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			if !bytes.Equal(got, tc.want) {
				t.Errorf("body %q, want %q", got, tc.want)
			}
		})
	}
}

func TestErrorBody(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 10<<10)
	if b := ErrorBody(response(500, http.Header{}, long, true)); len(b) != 4<<10 {
		t.Errorf("plain: %d bytes, want 4 KiB", len(b))
	}
	z := response(500, http.Header{"Content-Encoding": {"gzip"}}, gzipped(t, long), false)
	if b := ErrorBody(z); len(b) != 4<<10 || b[0] != 'x' {
		t.Errorf("gzip: %d bytes, want 4 KiB decompressed", len(b))
	}
}

type countingBody struct {
	io.Reader
	closed bool
}

func (b *countingBody) Close() error { b.closed = true; return nil }

func TestDrainClose(t *testing.T) {
	small := &countingBody{Reader: strings.NewReader("rest of the body")}
	DrainClose(small)
	if !small.closed || small.Reader.(*strings.Reader).Len() != 0 {
		t.Error("a short rest was not drained and closed")
	}
	huge := &countingBody{Reader: bytes.NewReader(make([]byte, 1<<20))}
	DrainClose(huge)
	if left := huge.Reader.(*bytes.Reader).Len(); !huge.closed || left == 0 || left > 1<<20-maxDrain {
		t.Errorf("a long rest: %d bytes left, closed %v; want it drained by about 64 KiB only", left, huge.closed)
	}
}

func TestExcerpt(t *testing.T) {
	if got := Excerpt("  short \n"); got != "short" {
		t.Errorf("%q", got)
	}
	if got := Excerpt(strings.Repeat("a", 300)); got != strings.Repeat("a", 200)+"…" {
		t.Errorf("%d bytes", len(got))
	}
}

func TestNewTransport(t *testing.T) {
	tr := NewTransport(nil)
	if tr.MaxIdleConnsPerHost != 64 || tr.TLSClientConfig != nil && tr.TLSClientConfig.ServerName != "" {
		t.Errorf("MaxIdleConnsPerHost %d", tr.MaxIdleConnsPerHost)
	}
	if tr == http.DefaultTransport {
		t.Error("the default transport itself")
	}
}
