package jsonrpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
)

// logged records the methods an Invoker sends, in order.
type logged struct {
	next jsonrpc.Invoker
	log  *[]string
}

func (l logged) Call(ctx context.Context, method string, params, result any) error {
	*l.log = append(*l.log, "call "+method)
	return l.next.Call(ctx, method, params, result)
}
func (l logged) Notify(ctx context.Context, method string, params any) error {
	*l.log = append(*l.log, "notify "+method)
	return l.next.Notify(ctx, method, params)
}
func (l logged) Batch(ctx context.Context, b *jsonrpc.Batch) error {
	*l.log = append(*l.log, "batch")
	return l.next.Batch(ctx, b)
}

// retrying retries the calls of idempotent methods once on ErrConnectionLost.
type retrying struct {
	jsonrpc.Invoker
	idempotent map[string]bool
	retries    *atomic.Int64
}

func (r retrying) Call(ctx context.Context, method string, params, result any) error {
	err := r.Invoker.Call(ctx, method, params, result)
	if err != nil && r.idempotent[method] && errors.Is(err, jsonrpc.ErrConnectionLost) {
		r.retries.Add(1)
		return r.Invoker.Call(ctx, method, params, result)
	}
	return err
}

// Interceptors wrap Call, Notify and Batch on every kind of client, the
// first outermost; they can add HTTP headers, and retry what the caller
// marks idempotent (around a ReconnectClient).
func TestInterceptors(t *testing.T) {
	srv := &jsonrpc.Server{Handler: cutMux(func(c *jsonrpc.Conn) { c.Close() })}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var gotHeader atomic.Value
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			gotHeader.Store(h) // only the calls carry it
		}
		srv.ServeHTTP(w, r)
	}))
	defer func() { hs.Close(); srv.Shutdown(context.Background()) }()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	var log []string
	tag := func(name string) jsonrpc.Interceptor {
		return func(next jsonrpc.Invoker) jsonrpc.Invoker {
			log = append(log, "wrap "+name)
			return logged{next: next, log: &log}
		}
	}
	auth := func(next jsonrpc.Invoker) jsonrpc.Invoker {
		return headerInvoker{next}
	}
	for _, url := range []string{l.URL, hs.URL} {
		log = nil
		c, err := jsonrpc.Dial(ctx, url, jsonrpc.WithInterceptors(tag("outer"), tag("inner"), auth))
		if err != nil {
			t.Fatal(err)
		}
		var n float64
		var b jsonrpc.Batch
		b.Call("sum", []int{1, 2}, &n)
		if err := c.Call(ctx, "sum", []int{1, 2}, &n); err != nil || n != 3 {
			t.Fatal(err)
		}
		if err := c.Notify(ctx, "update", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Batch(ctx, &b); err != nil {
			t.Fatal(err)
		}
		c.Close()
		want := []string{"wrap inner", "wrap outer", "call sum", "call sum", "notify update", "notify update", "batch", "batch"}
		if len(log) != len(want) {
			t.Fatalf("%s: log %q, want %q", url, log, want)
		}
		for i := range want {
			if log[i] != want[i] {
				t.Fatalf("%s: log %q, want %q", url, log, want)
			}
		}
	}
	if h, _ := gotHeader.Load().(string); h != "Bearer t0" {
		t.Fatalf("Authorization %q", h)
	}

	// A retry of an idempotent method, around a reconnecting client.
	var retries atomic.Int64
	rc, err := jsonrpc.Dial(ctx, l.URL, jsonrpc.WithBackoff(5*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonrpc.Intercept(rc, func(next jsonrpc.Invoker) jsonrpc.Invoker {
		return retrying{Invoker: next, idempotent: map[string]bool{"cut": true}, retries: &retries}
	})
	defer c.Close()
	err = c.Call(ctx, "cut", nil, nil) // cut twice: the retry is lost too
	if !errors.Is(err, jsonrpc.ErrConnectionLost) || retries.Load() != 1 {
		t.Fatalf("retry: %v, %d retries", err, retries.Load())
	}
	var sum float64
	if err := c.Call(ctx, "sum", []int{2, 2}, &sum); err != nil || sum != 4 {
		t.Fatalf("after: %v %v", sum, err)
	}
}

// headerInvoker adds an Authorization header to each HTTP request, as an
// auth-refreshing interceptor would.
type headerInvoker struct{ jsonrpc.Invoker }

func (h headerInvoker) Call(ctx context.Context, method string, params, result any) error {
	return h.Invoker.Call(jsonrpc.ContextWithHeader(ctx, http.Header{"Authorization": {"Bearer t0"}}), method, params, result)
}
