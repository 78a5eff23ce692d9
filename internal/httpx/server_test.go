package httpx

import (
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func gzipped(t testing.TB, b []byte) []byte {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// chunked hides a reader's type, so that httptest.NewRequest sets no
// Content-Length.
type chunked struct{ io.Reader }

func TestReadPOST(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","method":"m"}`)
	big := bytes.Repeat([]byte("a"), 200)
	for _, tc := range []struct {
		name     string
		ct, ce   string
		body     io.Reader
		wantErr  error
		wantCode int
	}{
		{"plain", "application/json", "", bytes.NewReader(msg), nil, 0},
		{"charset", "application/json; charset=UTF-8", "", bytes.NewReader(msg), nil, 0},
		{"gzip", "application/json", "gzip", bytes.NewReader(gzipped(t, msg)), nil, 0},
		{"chunked", "application/json", "", chunked{bytes.NewReader(msg)}, nil, 0},
		{"text", "text/plain", "", bytes.NewReader(msg), ErrAnswered, 415},
		{"json-rpc type", "application/json-rpc", "", bytes.NewReader(msg), ErrAnswered, 415},
		{"latin1", "application/json; charset=latin1", "", bytes.NewReader(msg), ErrAnswered, 415},
		{"brotli", "application/json", "br", bytes.NewReader(msg), ErrAnswered, 415},
		{"declared too large", "application/json", "", bytes.NewReader(big), ErrTooLarge, 413},
		{"chunked too large", "application/json", "", chunked{bytes.NewReader(big)}, ErrTooLarge, 413},
		{"gzip bomb", "application/json", "gzip", bytes.NewReader(gzipped(t, big)), ErrTooLarge, 413},
		{"broken gzip", "application/json", "gzip", bytes.NewReader([]byte("not gzip")), ErrAnswered, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", tc.body)
			r.Header.Set("Content-Type", tc.ct)
			if tc.ce != "" {
				r.Header.Set("Content-Encoding", tc.ce)
			}
			w := httptest.NewRecorder()
			got, err := ReadPOST(w, r, nil, 100, time.Minute)
			if err != tc.wantErr {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && !bytes.Equal(got, msg) {
				t.Errorf("body = %q", got)
			}
			if tc.wantCode != 0 && w.Code != tc.wantCode {
				t.Errorf("status %d, want %d (%s)", w.Code, tc.wantCode, w.Body)
			}
			if tc.ce == "br" && w.Header().Get("Accept-Encoding") != "gzip" {
				t.Error("415 for an encoding does not say which one is accepted")
			}
		})
	}
}

// TestReadPOSTDeadline sends a body that never ends on a real connection:
// the server answers 408 and closes it.
func TestReadPOSTDeadline(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := ReadPOST(w, r, nil, 1<<20, 200*time.Millisecond); err != ErrAnswered {
			t.Errorf("err = %v, want ErrAnswered", err)
		}
	}))
	defer srv.Close()
	c, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	reply, _ := io.ReadAll(c)
	if !bytes.HasPrefix(reply, []byte("HTTP/1.1 408")) || !bytes.Contains(reply, []byte("HTTPBodyTimeout")) {
		t.Errorf("reply %q, want 408", reply)
	}
}

func TestOnlyPOST(t *testing.T) {
	w := httptest.NewRecorder()
	if OnlyPOST(w, httptest.NewRequest("GET", "/", nil)) || w.Code != 405 || w.Header().Get("Allow") != "POST" {
		t.Errorf("GET: %d %v", w.Code, w.Header())
	}
	w = httptest.NewRecorder()
	if !OnlyPOST(w, httptest.NewRequest("POST", "/", nil)) || w.Body.Len() != 0 {
		t.Error("POST refused")
	}
}

func TestReadPOSTTooLarge(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/", strings.NewReader("[1,2,3]"))
	r.Header.Set("Content-Type", "application/json")
	if _, err := ReadPOST(w, r, nil, 5, 0); err != ErrTooLarge {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if w.Code != 413 || w.Header().Get("Connection") != "close" || !strings.Contains(w.Body.String(), "the limit is 5 bytes") {
		t.Errorf("%d %v %q", w.Code, w.Header(), w.Body)
	}
}

func TestIsJSON(t *testing.T) {
	for _, tc := range []struct {
		ct             string
		strict, client bool
	}{
		{"application/json", true, true},
		{"Application/JSON", true, true},
		{"application/json; charset=utf-8", true, true},
		{"application/json; charset=UTF8", true, true},
		{"application/json; charset=iso-8859-1", false, false},
		{"application/vnd.api+json", false, true},
		{"application/json-rpc", false, true},
		{"text/json", false, false},
		{"", false, false},
		{"application/json; charset", false, false},
	} {
		if got := IsJSON(tc.ct, true); got != tc.strict {
			t.Errorf("IsJSON(%q, strict) = %v", tc.ct, got)
		}
		if got := IsJSON(tc.ct, false); got != tc.client {
			t.Errorf("IsJSON(%q, lenient) = %v", tc.ct, got)
		}
	}
}

// FuzzIsJSON: no Content-Type panics, and what the server accepts the
// client accepts too.
func FuzzIsJSON(f *testing.F) {
	for _, s := range []string{"application/json", "application/x+json; charset=utf-8", "a/b;c=\"d\"", ";;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		if IsJSON(ct, true) && !IsJSON(ct, false) {
			t.Errorf("%q: strict but not lenient", ct)
		}
	})
}

func TestSetReadDeadlineUnwraps(t *testing.T) {
	if SetReadDeadline(httptest.NewRecorder(), time.Now()) {
		t.Error("a recorder has no connection, yet the deadline was set")
	}
	var set bool
	w := &unwrapper{ResponseWriter: httptest.NewRecorder(), inner: &deadliner{ResponseWriter: httptest.NewRecorder(), set: &set}}
	if !SetReadDeadline(w, time.Now()) || !set {
		t.Error("the wrapped writer's deadline was not set")
	}
}

type unwrapper struct {
	http.ResponseWriter
	inner http.ResponseWriter
}

func (u *unwrapper) Unwrap() http.ResponseWriter { return u.inner }

type deadliner struct {
	http.ResponseWriter
	set *bool
}

func (d *deadliner) SetReadDeadline(time.Time) error { *d.set = true; return nil }
