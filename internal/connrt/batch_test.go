package connrt

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

type request struct {
	method string
	params any
	call   bool
}

func TestAppendBatch(t *testing.T) {
	reqs := []request{{"a", []int{1}, false}, {"b", nil, true}, {"c", map[string]int{"x": 2}, true}}
	var seq atomic.Uint64
	seq.Store(41)
	type sentCall struct{ i, id, group uint64 }
	var sent []sentCall
	msg, err := AppendBatch([]byte("head:"), len(reqs), &seq, func(i int) (string, any, bool) {
		return reqs[i].method, reqs[i].params, reqs[i].call
	}, func(i int, id, group uint64) { sent = append(sent, sentCall{uint64(i), id, group}) })
	if err != nil {
		t.Fatal(err)
	}
	want := `head:[{"jsonrpc":"2.0","method":"a","params":[1]},{"jsonrpc":"2.0","id":42,"method":"b"},{"jsonrpc":"2.0","id":43,"method":"c","params":{"x":2}}]`
	if string(msg) != want {
		t.Fatalf("message\n%s\nwant\n%s", msg, want)
	}
	if !slices.Equal(sent, []sentCall{{1, 42, 42}, {2, 43, 42}}) {
		t.Fatalf("calls sent %v: want ids 42 and 43, both of group 42", sent)
	}
	if _, err := AppendBatch(nil, 0, &seq, nil, nil); err != ErrEmptyBatch {
		t.Fatalf("empty batch: %v", err)
	}
	_, err = AppendBatch(nil, 1, &seq, func(int) (string, any, bool) { return "bad", func() {}, true }, func(int, uint64, uint64) {})
	if err == nil {
		t.Fatal("params that cannot be encoded were sent")
	}
}

func TestWait(t *testing.T) {
	chans := []chan int{make(chan int, 1), make(chan int, 1), make(chan int, 1)}
	chans[0] <- 10
	chans[1] <- 11
	var got []int
	take := func(i int) chan int { return chans[i] }
	done := func(i, r int) { got = append(got, i*100+r) }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The results there already are taken, then the context's end stops the wait.
	if err := Wait(ctx, 3, take, done); !errors.Is(err, context.Canceled) || !slices.Equal(got, []int{10, 111}) {
		t.Fatalf("ended context: %v, results %v", err, got)
	}
	got = nil
	go func() { chans[2] <- 12 }()
	if err := Wait(context.Background(), 1, func(int) chan int { return chans[2] }, done); err != nil || !slices.Equal(got, []int{12}) {
		t.Fatalf("a result that comes later: %v, %v", err, got)
	}
}
