package httpx

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAccepts(t *testing.T) {
	for _, c := range []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"*"}, true},
		{[]string{"br;q=1, gzip;q=0.5"}, true},
		{[]string{"br", "deflate, gzip"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000, identity"}, false},
		{[]string{"gzip;Q=0"}, false},
		{[]string{"gzip;q=bad"}, true},
		{[]string{"br, deflate"}, false},
		{[]string{"gzipped"}, false},
	} {
		h := http.Header{}
		if c.accept != nil {
			h["Accept-Encoding"] = c.accept
		}
		if got := Accepts(h); got != c.want {
			t.Errorf("Accept-Encoding %q: Accepts %v, want %v", c.accept, got, c.want)
		}
	}
}

func TestContentEncoding(t *testing.T) {
	for _, c := range []struct {
		ce      []string
		gzipped bool
		bad     bool
	}{
		{nil, false, false},
		{[]string{"gzip"}, true, false},
		{[]string{"X-Gzip"}, true, false},
		{[]string{"identity"}, false, false},
		{[]string{""}, false, false},
		{[]string{"br"}, false, true},
		{[]string{"gzip", "gzip"}, false, true},
	} {
		h := http.Header{}
		if c.ce != nil {
			h["Content-Encoding"] = c.ce
		}
		gzipped, err := ContentEncoding(h)
		if gzipped != c.gzipped || (err != nil) != c.bad {
			t.Errorf("Content-Encoding %q: %v, %v", c.ce, gzipped, err)
		}
		if c.bad && !strings.HasPrefix(err.Error(), "unsupported Content-Encoding ") {
			t.Errorf("Content-Encoding %q: error %v", c.ce, err)
		}
	}
}

func TestAppendRoundTrip(t *testing.T) {
	msg := []byte(strings.Repeat(`{"jsonrpc":"2.0","id":1,"result":"abc"}`, 100))
	for range 3 { // pooled writers are reset between uses
		z := Append([]byte("prefix"), msg)
		if !bytes.HasPrefix(z, []byte("prefix")) {
			t.Fatalf("Append lost dst: %.10q", z)
		}
		got, err := ReadEncoded(nil, bytes.NewReader(z[len("prefix"):]), true, -1, 1<<20)
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("round trip: %v, %d bytes of %d", err, len(got), len(msg))
		}
	}
}

// zeros is a reader of n zero bytes that counts what was read of it.
type zeros struct{ n, read int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n)
	clear(p[:k])
	z.n -= k
	z.read += k
	return int(k), nil
}

func TestReadEncodedGzipStopsAtLimit(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	if _, err := io.Copy(zw, &zeros{n: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	const limit = 1000
	got, err := ReadEncoded(nil, bytes.NewReader(bomb.Bytes()), true, -1, limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != limit+1 {
		t.Fatalf("read %d decompressed bytes of an 8 MiB bomb, want limit+1 = %d", len(got), limit+1)
	}
	if _, err := ReadEncoded(nil, strings.NewReader("not gzip"), true, -1, limit); err == nil || !strings.HasPrefix(err.Error(), "gzip: ") {
		t.Fatalf("a body that is not gzip: %v", err)
	}
}

func TestReadBody(t *testing.T) {
	src := &zeros{n: 1 << 20}
	got, err := ReadBody(nil, src, -1, 100)
	if err != nil || len(got) != 101 || src.read != 101 {
		t.Fatalf("over the limit: %v, %d bytes kept, %d read; want 101 and 101", err, len(got), src.read)
	}
	got, err = ReadEncoded([]byte("x"), strings.NewReader("hello"), false, 5, 100)
	if err != nil || string(got) != "xhello" {
		t.Fatalf("declared length: %q %v", got, err)
	}
	boom := errors.New("boom")
	_, err = ReadBody(nil, io.MultiReader(strings.NewReader("ab"), iotestErr{boom}), -1, 100)
	if !errors.Is(err, boom) {
		t.Fatalf("a failing body: %v", err)
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

func TestChunkedBody(t *testing.T) {
	for _, gzipped := range []bool{false, true} {
		rec := httptest.NewRecorder()
		b := NewChunkedBody(rec, gzipped)
		if err := b.Write([]byte(`[1,`)); err != nil {
			t.Fatal(err)
		}
		if gzipped && (!rec.Flushed || rec.Body.Len() == 0) {
			t.Errorf("gzipped %v: the first chunk was not flushed", gzipped)
		}
		if err := b.Write([]byte(`2]`)); err != nil {
			t.Fatal(err)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		body := rec.Body.Bytes()
		if gzipped {
			var err error
			if body, err = ReadEncoded(nil, bytes.NewReader(body), true, -1, 100); err != nil {
				t.Fatal(err)
			}
		}
		if string(body) != `[1,2]` {
			t.Errorf("gzipped %v: body %q", gzipped, body)
		}
	}
}
