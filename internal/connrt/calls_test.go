package connrt

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// call is a test's call record.
type call struct{ group uint64 }

// TakeID takes the call whose id reads raw, with its group; Left takes
// the calls of the batch a reply answered, or, after an id-null error, the
// calls waiting when they all belong to one message.
func TestTakeIDAndLeft(t *testing.T) {
	var s Calls[*call]
	for id := uint64(1); id <= 4; id++ {
		s.Add(id, min(id, 2), &call{group: min(id, 2)}) // 1 alone, then a batch of 2, 3, 4
	}
	for _, raw := range []string{"9", `"2"`, "02", "1.0"} {
		if _, _, ok := s.TakeID([]byte(raw)); ok {
			t.Errorf("TakeID(%s) took a call", raw)
		}
	}
	if p, group, ok := s.TakeID([]byte("3")); !ok || group != 2 || p.group != 2 {
		t.Fatalf("TakeID(3) = %v %d %v", p, group, ok)
	}
	if left := s.Left(false, 2, true); left != nil {
		t.Errorf("an id-null error with calls of two messages waiting took %d", len(left))
	}
	if left := s.Left(true, 2, false); len(left) != 2 || s.Len() != 1 {
		t.Errorf("Left of the batch took %d, %d left", len(left), s.Len())
	}
	if left := s.Left(false, 0, true); len(left) != 1 || s.Len() != 0 {
		t.Errorf("an id-null error with one message's calls waiting took %d", len(left))
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
