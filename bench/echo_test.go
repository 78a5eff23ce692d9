package bench

import (
	"context"
	"slices"
	"testing"
)

// TestEcho checks every implementation on every transport it offers before
// any of them is timed: a small echo, a 1 MiB echo and a batch over TCP;
// over HTTP, WebSocket and pipes (stdio) a small echo, then 400 from 8
// callers at once.
func TestEcho(t *testing.T) {
	ctx := context.Background()
	big := BigParams(bigSize)
	batchIn := []Params{{A: 1, B: "x"}, {A: 2, B: "y"}, {A: 3, B: "é\"\\"}}
	for _, im := range Impls() {
		t.Run(im.Name+"/tcp", func(t *testing.T) {
			for _, in := range []Params{SmallParams, big} {
				c := startTCP(t, im, in)
				var out Params
				if err := c.Echo(ctx, &in, &out); err != nil {
					t.Fatal(err)
				}
				if err := checkEcho(&in, &out); err != nil {
					t.Fatalf("%v: got a=%d and %d bytes of b", err, out.A, len(out.B))
				}
			}
			if im.Name == "raw" || im.Name == "sourcegraph" {
				return // no batches
			}
			c := startTCP(t, im, SmallParams)
			out := make([]Params, len(batchIn))
			if err := c.Batch(ctx, batchIn, out); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(batchIn, out) {
				t.Fatalf("batch: got %v, want %v", out, batchIn)
			}
		})
		for _, tr := range []struct {
			name  string
			has   func(*Impl) bool
			start func(testing.TB, *Impl, Params) Client
		}{{"http", hasHTTP, startHTTP}, {"ws", hasWS, startWS}, {"stdio", hasStdio, startStdio}} {
			if !tr.has(im) {
				continue
			}
			t.Run(im.Name+"/"+tr.name, func(t *testing.T) {
				c := tr.start(t, im, SmallParams)
				in := SmallParams
				var out Params
				if err := c.Echo(ctx, &in, &out); err != nil {
					t.Fatal(err)
				}
				if err := checkEcho(&in, &out); err != nil {
					t.Fatal(err)
				}
				concurrentEchoes(t, c)
			})
		}
	}
	t.Run("json", func(t *testing.T) {
		var j JSONWork
		for _, in := range []Params{SmallParams, big} {
			var out Params
			if err := j.Echo(ctx, &in, &out); err != nil {
				t.Fatal(err)
			}
			if err := checkEcho(&in, &out); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]Params, len(batchIn))
		if err := j.Batch(ctx, batchIn, out); err != nil || !slices.Equal(batchIn, out) {
			t.Fatalf("batch: %v %v", out, err)
		}
	})
}

// TestRawConcurrent checks the multiplexed mode of the raw TCP client.
func TestRawConcurrent(t *testing.T) {
	concurrentEchoes(t, startTCP(t, Raw(), SmallParams))
}

// concurrentEchoes makes 8 x 50 calls on c from 8 goroutines, as runPar
// does (switching a raw client to its multiplexed mode).
func concurrentEchoes(t *testing.T, c Client) {
	t.Helper()
	if cc, ok := c.(interface{ Concurrent() }); ok {
		cc.Concurrent()
	}
	done := make(chan error)
	for range 8 {
		go func() {
			in, out := SmallParams, Params{}
			var err error
			for range 50 {
				if err = c.Echo(context.Background(), &in, &out); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
