package connrt

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// call is a test's call record: what Outcomes sent it.
type call struct {
	group uint64
	got   string // "result …", "error …", "fail …", "none"
}

// record sends each call a description of its outcome.
type record struct{}

func (record) Answer(p *call, data []byte, e *wire.Envelope, alone bool) {
	if e.ErrObj.Present() {
		p.got = "error " + string(e.ErrObj.Of(data))
	} else {
		p.got = "result " + string(e.Result.Of(data))
	}
	if alone {
		p.got += " alone"
	}
}

func (record) NullError(data []byte, e *wire.Envelope) error {
	if e.Kind != wire.KindResponse || !e.ErrObj.Present() {
		return nil
	}
	if e.ID.Present() && string(e.ID.Of(data)) != "null" {
		return nil
	}
	return errors.New(string(e.ErrObj.Of(data)))
}

func (record) Fail(p *call, err error) { p.got = "fail " + err.Error() }
func (record) NoResponse(p *call)      { p.got = "none" }

func parse(t *testing.T, msg string) *wire.Message {
	t.Helper()
	var s wire.Scanner
	var m wire.Message
	if err := s.Parse([]byte(msg), 64, &m); err != nil {
		t.Fatalf("%s: %v", msg, err)
	}
	return &m
}

// Every rule of the package, on a set holding a single call (id 1) and a
// batch of three (ids 2, 3, 4; group 2).
func TestAnswer(t *testing.T) {
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
			map[uint64]string{1: "error " + errObj + " alone"}, 0, "", false},
		{"batch reply leaves one out", `[{"jsonrpc":"2.0","id":3,"result":3},{"jsonrpc":"2.0","id":2,"result":2}]`,
			map[uint64]string{2: "result 2", 3: "result 3", 4: "none"}, 0, "", false},
		{"batch reply with an id-null error", `[{"jsonrpc":"2.0","id":2,"result":2},{"jsonrpc":"2.0","id":null,"error":` + errObj + `}]`,
			map[uint64]string{2: "result 2", 3: "fail " + errObj, 4: "fail " + errObj}, 0, "", false},
		{"unknown ids", `[{"jsonrpc":"2.0","id":9,"result":9},{"jsonrpc":"2.0","id":"1","result":1},{"jsonrpc":"2.0","id":1.5,"result":1}]`,
			map[uint64]string{}, 3, "9", false},
		{"requests are not responses", `[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n"}]`,
			map[uint64]string{}, 0, "", false},
		{"id-null error with calls of two messages waiting", `{"jsonrpc":"2.0","id":null,"error":` + errObj + `}`,
			map[uint64]string{}, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Calls[*call]
			calls := map[uint64]*call{1: {group: 1}, 2: {group: 2}, 3: {group: 2}, 4: {group: 2}}
			for id, c := range calls {
				s.Add(id, c.group, c)
			}
			m := parse(t, tt.msg)
			unmatched, firstID, nullErr := s.Answer([]byte(tt.msg), m.Elems, m.Batch, record{})
			if unmatched != tt.unmatched || firstID != tt.firstID || (nullErr != nil) != tt.nullErr {
				t.Errorf("Answer = %d %q %v, want %d %q null error %v", unmatched, firstID, nullErr, tt.unmatched, tt.firstID, tt.nullErr)
			}
			for id, c := range calls {
				if c.got != tt.want[id] {
					t.Errorf("call %d got %q, want %q", id, c.got, tt.want[id])
				}
				if _, waiting := s.Get(id); waiting != (c.got == "") {
					t.Errorf("call %d: waiting %v after %q", id, waiting, c.got)
				}
			}
		})
	}
}

// An id-null error answers the calls waiting when they all belong to one
// message.
func TestAnswerNullErrorOneMessage(t *testing.T) {
	var s Calls[*call]
	a, b := &call{group: 5}, &call{group: 5}
	s.Add(5, 5, a)
	s.Add(6, 5, b)
	msg := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`
	m := parse(t, msg)
	if _, _, nullErr := s.Answer([]byte(msg), m.Elems, m.Batch, record{}); nullErr != nil {
		t.Errorf("the id-null error answered the calls, yet was reported: %v", nullErr)
	}
	if a.got == "" || a.got != b.got || s.Len() != 0 {
		t.Errorf("calls got %q and %q, %d left", a.got, b.got, s.Len())
	}
}

func TestTakeAllEnds(t *testing.T) {
	var s Calls[*call]
	s.Add(1, 1, &call{group: 1})
	if s.Ended() {
		t.Fatal("a new set is ended")
	}
	if m := s.TakeAll(); len(m) != 1 || !s.Ended() || s.Len() != 0 {
		t.Errorf("TakeAll took %d, ended %v, %d left", len(m), s.Ended(), s.Len())
	}
	if _, ok := s.Take(1); ok {
		t.Error("Take found a call after TakeAll")
	}
}

func TestTakeGroup(t *testing.T) {
	var s Calls[*call]
	for id := uint64(1); id <= 5; id++ {
		s.Add(id, min(id, 3), &call{group: min(id, 3)}) // groups 1, 2, 3, 3, 3
	}
	if got := s.TakeOneGroup(); got != nil {
		t.Errorf("TakeOneGroup took %d calls of several messages", len(got))
	}
	if got := s.TakeGroup(3); len(got) != 3 || s.Len() != 2 {
		t.Errorf("TakeGroup took %d, %d left", len(got), s.Len())
	}
	s.Take(1)
	if got := s.TakeOneGroup(); len(got) != 1 || got[0].group != 2 || s.Len() != 0 {
		t.Errorf("TakeOneGroup took %v, %d left", got, s.Len())
	}
	if got := s.TakeOneGroup(); got != nil {
		t.Errorf("TakeOneGroup took %d calls of an empty set", len(got))
	}
}

func TestParseID(t *testing.T) {
	for _, n := range []uint64{0, 1, 9, 10, 12345, 1<<63 - 1, 999999999999999999} {
		if got, ok := ParseID(strconv.AppendUint(nil, n, 10)); !ok || got != n {
			t.Errorf("ParseID(%d) = %d %v", n, got, ok)
		}
	}
	for _, raw := range []string{"", "01", "-1", "1.0", "1e3", `"1"`, "null", "12345678901234567890", "1 "} {
		if n, ok := ParseID([]byte(raw)); ok {
			t.Errorf("ParseID(%q) = %d, want not ours", raw, n)
		}
	}
}

// ParseID accepts exactly the canonical decimal text of a number with at
// most 19 digits.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"0", "1", "007", "18446744073709551615", "-3", "9999999999999999999", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n, ok := ParseID([]byte(raw))
		canonical := len(raw) <= 19 && raw == fmt.Sprint(n)
		if ok != canonical {
			t.Errorf("ParseID(%q) = %d %v", raw, n, ok)
		}
		if ok && !slices.Equal(strconv.AppendUint(nil, n, 10), []byte(raw)) {
			t.Errorf("ParseID(%q) = %d", raw, n)
		}
	})
}
