package pubsub

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func newTestRegistry() *Registry {
	return NewRegistry(func(o *ErrorObject) error { return fmt.Errorf("server error %d: %s", o.Code, o.Message) })
}

func event(id string, result string) []byte {
	return []byte(`{"subscription":"` + id + `","result":` + result + `}`)
}

func next(t *testing.T, q *Queue) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := q.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return string(raw)
}

// Events that arrive between the subscribe call's answer and the claim of
// its id are held and come first, in order; events of other methods, or
// of ids nobody expects, are not taken or are dropped.
func TestRegistryHoldsEarlyEvents(t *testing.T) {
	r := newTestRegistry()
	if r.Take([]byte("ns_subscription"), event("a", "1")) {
		t.Fatal("an event was taken before any subscribe call")
	}
	r.Expect("ns_subscription", 10)
	if !r.Take([]byte("ns_subscription"), event("a", "1")) || !r.Take([]byte("ns_subscription"), event("a", "2")) {
		t.Fatal("an early event was not taken")
	}
	if r.Take([]byte("other"), event("a", "9")) {
		t.Fatal("another method's notification was taken")
	}
	if r.Take([]byte("ns_subscription"), []byte(`{"result":1}`)) {
		t.Fatal("a notification without a subscription id was taken")
	}
	q := r.Claim("ns_subscription", "a", 10, nil)
	r.ExpectDone("ns_subscription")
	r.Take([]byte("ns_subscription"), event("a", "3"))
	for _, want := range []string{"1", "2", "3"} {
		if got := next(t, q); got != want {
			t.Fatalf("event %s, want %s", got, want)
		}
	}
	if !r.Take([]byte("ns_subscription"), event("gone", "1")) {
		t.Fatal("an event of a subscription no longer held was not dropped")
	}
}

// A queue that overflows ends its subscription with ErrOverflow (after
// the events it holds) and calls onOverflow once.
func TestQueueOverflow(t *testing.T) {
	r := newTestRegistry()
	r.Expect("m", 2)
	overflows := 0
	q := r.Claim("m", "x", 2, func() { overflows++ })
	r.ExpectDone("m")
	for i := range 4 {
		r.Take([]byte("m"), event("x", fmt.Sprint(i)))
	}
	if overflows != 1 {
		t.Fatalf("onOverflow called %d times", overflows)
	}
	next(t, q)
	next(t, q)
	if _, err := q.Next(context.Background()); !errors.Is(err, ErrOverflow) || !errors.Is(q.Err(), ErrOverflow) {
		t.Fatalf("after the queue: %v, want ErrOverflow", err)
	}
}

// An error notification ends the subscription with toError's error; the
// dropped counts the server reports add up; CloseAll ends the others, and
// a claim after it.
func TestQueueEnds(t *testing.T) {
	r := newTestRegistry()
	r.Expect("m", 10)
	a := r.Claim("m", "a", 10, nil)
	b := r.Claim("m", "b", 10, nil)
	r.ExpectDone("m")
	r.Take([]byte("m"), []byte(`{"subscription":"a","dropped":3,"result":1}`))
	r.Take([]byte("m"), []byte(`{"subscription":"a","dropped":2,"result":2}`))
	r.Take([]byte("m"), []byte(`{"subscription":"a","error":{"code":-32011,"message":"slow"}}`))
	if a.Dropped() != 5 {
		t.Fatalf("Dropped %d, want 5", a.Dropped())
	}
	next(t, a)
	next(t, a)
	if _, err := a.Next(context.Background()); err == nil || err.Error() != "server error -32011: slow" {
		t.Fatalf("after an error notification: %v", err)
	}
	closed := errors.New("closed")
	r.CloseAll(closed)
	if _, err := b.Next(context.Background()); err != closed {
		t.Fatalf("after CloseAll: %v", err)
	}
	r.Expect("m", 10)
	c := r.Claim("m", "c", 10, nil)
	if !errors.Is(c.Err(), closed) {
		t.Fatalf("a claim after CloseAll: %v", c.Err())
	}
}

// Next gives up with its context; Finish with discard drops what is queued.
func TestQueueNextAndFinish(t *testing.T) {
	r := newTestRegistry()
	r.Expect("m", 10)
	q := r.Claim("m", "x", 10, nil)
	r.ExpectDone("m")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := q.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on an empty queue: %v", err)
	}
	r.Take([]byte("m"), event("x", `{"k":[1]}`))
	done := errors.New("done")
	q.Finish(done, true)
	if raw, err := q.Next(context.Background()); err != done || raw != nil {
		t.Fatalf("after Finish with discard: %s %v", raw, err)
	}
}

// NextInto decodes an event, ignoring members the server added; an event
// that does not fit is an error, and the end's reason follows.
func TestQueueNextInto(t *testing.T) {
	r := newTestRegistry()
	r.Expect("m", 10)
	q := r.Claim("m", "x", 10, nil)
	r.ExpectDone("m")
	r.Take([]byte("m"), event("x", `{"n":7,"extra":true}`))
	r.Take([]byte("m"), event("x", `"not an object"`))
	var v struct {
		N int `json:"n"`
	}
	if err := q.NextInto(context.Background(), &v); err != nil || v.N != 7 {
		t.Fatalf("NextInto = %+v, %v; want N 7", v, err)
	}
	if err := q.NextInto(context.Background(), &v); err == nil {
		t.Fatal("NextInto decoded a string into a struct")
	}
	done := errors.New("done")
	q.Finish(done, false)
	if err := q.NextInto(context.Background(), &v); err != done {
		t.Fatalf("after Finish: %v, want done", err)
	}
}
