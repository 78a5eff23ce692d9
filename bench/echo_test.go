package bench

import (
	"context"
	"slices"
	"testing"
)

// TestEcho checks every implementation on every transport it offers before
// any of them is timed: a small echo, a 1 MiB echo and a batch over TCP,
// a small echo over HTTP.
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
		if im.HTTPHandler == nil {
			continue
		}
		t.Run(im.Name+"/http", func(t *testing.T) {
			c := startHTTP(t, im, SmallParams)
			in := SmallParams
			var out Params
			if err := c.Echo(ctx, &in, &out); err != nil {
				t.Fatal(err)
			}
			if err := checkEcho(&in, &out); err != nil {
				t.Fatal(err)
			}
		})
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
	c := startTCP(t, Raw(), SmallParams)
	c.(*rawClient).Concurrent()
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
