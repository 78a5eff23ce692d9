package jsonrpc_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// countCalls is an interceptor that counts the calls it sees, by method.
func countCalls(mu *sync.Mutex, seen map[string]int) jsonrpc.Interceptor {
	return func(next jsonrpc.Invoker) jsonrpc.Invoker {
		return callCounter{next, mu, seen}
	}
}

type callCounter struct {
	jsonrpc.Invoker
	mu   *sync.Mutex
	seen map[string]int
}

func (c callCounter) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	c.seen[method]++
	c.mu.Unlock()
	return c.Invoker.Call(ctx, method, params, result)
}

// Interceptors see a CallIter call like any call, on every client (given
// WithInterceptors or wrapped by Intercept), and the elements still arrive.
func TestCallIterGoesThroughInterceptors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := streamParams{N: 500, Size: 100}
	srv := newStreamServer()
	defer srv.Shutdown(context.Background())
	for _, url := range []string{"http://127.0.0.1:0", "ws://127.0.0.1:0", "tcp://127.0.0.1:0"} {
		l, err := srv.Listen(url)
		if err != nil {
			t.Fatal(err)
		}
		for _, wrap := range []string{"WithInterceptors", "Intercept"} {
			var mu sync.Mutex
			seen := map[string]int{}
			var c jsonrpc.Client
			if wrap == "Intercept" {
				inner, err := jsonrpc.Dial(ctx, l.URL)
				if err != nil {
					t.Fatal(err)
				}
				c = jsonrpc.Intercept(inner, countCalls(&mu, seen))
			} else if c, err = jsonrpc.Dial(ctx, l.URL, jsonrpc.WithInterceptors(countCalls(&mu, seen))); err != nil {
				t.Fatal(err)
			}
			i := 0
			for v, err := range jsonrpc.CallIter[streamItem](ctx, c, "items", p) {
				if err != nil || v != p.item(i) {
					t.Fatalf("%s %s: element %d: %+v %v", l.URL, wrap, i, v, err)
				}
				i++
			}
			c.Close()
			if i != p.N || seen["items"] != 1 {
				t.Fatalf("%s %s: %d elements, the interceptor saw %d calls", l.URL, wrap, i, seen["items"])
			}
		}
	}
}

// With interceptors the HTTP client still decodes the body as it arrives:
// the server sends the rest of the array only once the loop has had the
// first element (a client that read the body whole would wait forever).
func TestCallIterInterceptedHTTPIncremental(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":[1,`)
		w.(http.Flusher).Flush()
		select {
		case <-first:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `2,3]}`)
	}))
	defer hs.Close()
	var mu sync.Mutex
	seen := map[string]int{}
	for _, c := range []jsonrpc.Client{
		jsonrpc.NewHTTPClient(hs.URL, jsonrpc.WithInterceptors(countCalls(&mu, seen))),
		jsonrpc.Intercept(jsonrpc.NewHTTPClient(hs.URL), countCalls(&mu, seen)),
	} {
		first = make(chan struct{})
		var got []int
		for v, err := range jsonrpc.CallIter[int](ctx, c, "m", nil) {
			if err != nil {
				t.Fatal(err)
			}
			if got = append(got, v); len(got) == 1 {
				close(first)
			}
		}
		c.Close()
		if len(got) != 3 || got[2] != 3 {
			t.Fatalf("got %v", got)
		}
	}
	if seen["m"] != 2 {
		t.Fatalf("the interceptors saw %d calls", seen["m"])
	}
}

// retryAll calls next again whatever the first call's error.
type retryAll struct{ jsonrpc.Invoker }

func (r retryAll) Call(ctx context.Context, method string, params, result any) error {
	if err := r.Invoker.Call(ctx, method, params, result); err != nil {
		return r.Invoker.Call(ctx, method, params, result)
	}
	return nil
}

// An interceptor that retries a CallIter call after its elements began to
// reach the loop gets an error (the loop cannot take them twice); a retry
// before any element (the first attempt failed outright) works.
func TestCallIterRetriedByInterceptor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	attempt := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		attempt++
		n := attempt
		mu.Unlock()
		var req struct{ ID json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		id := string(req.ID)
		w.Header().Set("Content-Type", "application/json")
		switch n {
		case 1: // cut after one element
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":[1,`)
		case 3: // fails outright
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":[1,2]}`)
		}
	}))
	defer hs.Close()
	retry := func(next jsonrpc.Invoker) jsonrpc.Invoker { return retryAll{next} }

	c := jsonrpc.NewHTTPClient(hs.URL, jsonrpc.WithInterceptors(retry))
	defer c.Close()
	var got []int
	var last error
	for v, err := range jsonrpc.CallIter[int](ctx, c, "m", nil) {
		if err != nil {
			last = err
			break
		}
		got = append(got, v)
	}
	if len(got) != 1 || last == nil || !strings.Contains(last.Error(), "made again") {
		t.Fatalf("cut then retried: %v then %v", got, last)
	}

	got = nil
	for v, err := range jsonrpc.CallIter[int](ctx, c, "m", nil) { // attempts 3 (503) and 4
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	if len(got) != 2 || attempt != 4 {
		t.Fatalf("failed then retried: %v after %d attempts", got, attempt)
	}
}
