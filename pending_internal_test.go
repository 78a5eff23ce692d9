package jsonrpc

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// describe says what a call received.
func describe(r callResult) string {
	var e *Error
	switch {
	case errors.Is(r.err, ErrNoResponse):
		return "none"
	case errors.As(r.err, &e):
		return "error " + strconv.FormatInt(e.Code, 10)
	case r.err != nil:
		return "failed " + r.err.Error()
	case r.msg != nil:
		return "result " + string(r.result) + " alone"
	}
	return "result " + string(r.result)
}

// Every rule of pendingSet.answer, on a set holding a single call (id 1)
// and a batch of three (ids 2, 3, 4; group 2).
func TestPendingAnswerRules(t *testing.T) {
	const errObj = `{"code":-32700,"message":"Parse error"}`
	tests := []struct {
		name      string
		msg       string
		want      map[uint64]string // what each call got ("" nothing: still waiting)
		unmatched int
		firstID   string
		nullErr   bool
	}{
		{"one result", `{"jsonrpc":"2.0","id":1,"result":null}`,
			map[uint64]string{1: "result null alone"}, 0, "", false},
		{"one error", `{"jsonrpc":"2.0","id":1,"error":` + errObj + `}`,
			map[uint64]string{1: "error -32700"}, 0, "", false},
		{"batch reply leaves one out", `[{"jsonrpc":"2.0","id":3,"result":3},{"jsonrpc":"2.0","id":2,"result":2}]`,
			map[uint64]string{2: "result 2", 3: "result 3", 4: "none"}, 0, "", false},
		{"batch reply with an id-null error", `[{"jsonrpc":"2.0","id":2,"result":2},{"jsonrpc":"2.0","id":null,"error":` + errObj + `}]`,
			map[uint64]string{2: "result 2", 3: "error -32700", 4: "error -32700"}, 0, "", false},
		{"unknown ids", `[{"jsonrpc":"2.0","id":9,"result":9},{"jsonrpc":"2.0","id":"1","result":1},{"jsonrpc":"2.0","id":1.5,"result":1}]`,
			map[uint64]string{}, 3, "9", false},
		{"requests are not responses", `[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n"}]`,
			map[uint64]string{}, 0, "", false},
		{"id-null error with calls of two messages waiting", `{"jsonrpc":"2.0","id":null,"error":` + errObj + `}`,
			map[uint64]string{}, 0, "", true},
		{"id-null error with one message's calls waiting", `{"jsonrpc":"2.0","id":null,"error":` + errObj + `}`,
			map[uint64]string{2: "error -32700", 3: "error -32700", 4: "error -32700"}, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s pendingSet
			calls := map[uint64]*pendingCall{}
			for id := uint64(1); id <= 4; id++ {
				if id == 1 && tt.name == "id-null error with one message's calls waiting" {
					continue
				}
				p := &pendingCall{ch: make(chan callResult, 1), group: min(id, 2)}
				calls[id] = p
				s.Add(id, p.group, p)
			}
			var sc wire.Scanner
			var m wire.Message
			if err := sc.Parse([]byte(tt.msg), 64, &m); err != nil {
				t.Fatal(err)
			}
			unmatched, firstID, nullErr := s.answer([]byte(tt.msg), m.Elems, m.Batch)
			if unmatched != tt.unmatched || firstID != tt.firstID || (nullErr != nil) != tt.nullErr {
				t.Errorf("answer = %d %q %v, want %d %q null error %v", unmatched, firstID, nullErr, tt.unmatched, tt.firstID, tt.nullErr)
			}
			for id, p := range calls {
				got := ""
				select {
				case r := <-p.ch:
					got = describe(r)
				default:
				}
				if got != tt.want[id] {
					t.Errorf("call %d got %q, want %q", id, got, tt.want[id])
				}
				if _, waiting := s.Get(id); waiting != (got == "") {
					t.Errorf("call %d: waiting %v after %q", id, waiting, got)
				}
			}
		})
	}
}

func TestEncodeBatch(t *testing.T) {
	var b Batch
	b.Notify("a", []int{1})
	b.Call("b", nil, nil)
	b.Call("c", map[string]int{"x": 2}, nil)
	var seq atomic.Uint64
	seq.Store(41)
	msg, sb, err := encodeBatch([]byte("head:"), &b, &seq)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.release()
	want := `head:[{"jsonrpc":"2.0","method":"a","params":[1]},{"jsonrpc":"2.0","id":42,"method":"b"},{"jsonrpc":"2.0","id":43,"method":"c","params":{"x":2}}]`
	if string(msg) != want {
		t.Fatalf("message\n%s\nwant\n%s", msg, want)
	}
	if len(sb.calls) != 2 || sb.calls[0].id != 42 || sb.calls[1].id != 43 || sb.calls[0].p.group != 42 || sb.calls[1].p.group != 42 {
		t.Fatalf("calls sent %+v: want ids 42 and 43, both of group 42", sb.calls)
	}
	if _, _, err := encodeBatch(nil, &Batch{}, &seq); err == nil {
		t.Fatal("an empty batch was encoded")
	}
	var bad Batch
	bad.Call("bad", func() {}, nil)
	if _, _, err := encodeBatch(nil, &bad, &seq); err == nil {
		t.Fatal("params that cannot be encoded were sent")
	}
}

func TestWaitTakesResultsThere(t *testing.T) {
	var b Batch
	var r0, r1 int
	c0, c1, c2 := b.Call("a", nil, &r0), b.Call("b", nil, &r1), b.Call("c", nil, nil)
	var seq atomic.Uint64
	_, sb, err := encodeBatch(nil, &b, &seq)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.release()
	sb.calls[0].p.ch <- callResult{result: []byte("10")}
	sb.calls[1].p.ch <- callResult{result: []byte("11")}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// The results there already are taken, then the context's end stops the wait.
	if err := wait(ctx, sb, false); !errors.Is(err, context.Canceled) || r0 != 10 || r1 != 11 || c0.Err != nil || c1.Err != nil {
		t.Fatalf("ended context: %v, results %d %d (%v %v)", err, r0, r1, c0.Err, c1.Err)
	}
	sb.calls = sb.calls[2:]
	go func() { sb.calls[0].p.ch <- callResult{err: ErrNoResponse} }()
	if err := wait(context.Background(), sb, false); err != nil || !errors.Is(c2.Err, ErrNoResponse) {
		t.Fatalf("a result that comes later: %v, %v", err, c2.Err)
	}
}
