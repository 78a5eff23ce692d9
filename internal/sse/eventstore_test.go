package sse

import (
	"strings"
	"testing"
)

func TestEventStore(t *testing.T) {
	s := NewStore(4, 1<<20)
	for i := range 3 {
		s.add(1, []byte{'a' + byte(i)})
		s.add(2, []byte{'x' + byte(i)})
	}
	// Six events in a store of four: 1-1 and 2-2 are gone.
	evs, complete := s.after(2, 0)
	if complete || len(evs) != 2 || string(evs[0].Data) != "y" || evs[0].Seq != 4 || string(evs[1].Data) != "z" {
		t.Fatalf("stream 2 after 0: %v %v", evs, complete)
	}
	if evs, complete := s.after(2, 2); !complete || len(evs) != 2 {
		t.Fatalf("stream 2 after its evicted event: %v %v", evs, complete)
	}
	if evs, complete := s.after(1, 0); complete || len(evs) != 2 {
		t.Fatalf("stream 1 after 0 (its 1 evicted): %v %v", evs, complete)
	}
	if evs, complete := s.after(1, 3); !complete || len(evs) != 1 || string(evs[0].Data) != "c" {
		t.Fatalf("stream 1 after 3: %v %v", evs, complete)
	}
	if evs, complete := s.after(7, 0); !complete || len(evs) != 0 {
		t.Fatalf("a stream without events: %v %v", evs, complete)
	}
	if s.last() != 6 {
		t.Fatalf("last %d", s.last())
	}
}

func TestEventStoreBytes(t *testing.T) {
	s := NewStore(100, 10)
	s.add(0, []byte("12345"))
	s.add(0, []byte("12345"))
	s.add(0, []byte("1")) // 11 bytes: the first goes
	if evs, complete := s.after(0, 0); complete || len(evs) != 2 || string(evs[0].Data)+string(evs[1].Data) != "123451" {
		t.Fatalf("%v %v", evs, complete)
	}
	// An event over the bound alone is kept (the newest always is).
	s.add(0, []byte(strings.Repeat("x", 50)))
	if evs, _ := s.after(0, 0); len(evs) != 1 || len(evs[0].Data) != 50 {
		t.Fatalf("%d events", len(evs))
	}
}

// A stream whose record of lost events is forgotten (the records are
// bounded too: state's TestMemoryEventStoreLostBound) counts as having
// lost what the forgotten ones lost.
func TestEventStoreLostBound(t *testing.T) {
	s := NewStore(2, 1<<20)
	for i := range uint64(10) {
		s.add(i, []byte("e"))
	}
	for i := range uint64(8) {
		if _, complete := s.after(i, 0); complete {
			t.Fatalf("stream %d lost its event but resumes as complete", i)
		}
	}
	if _, complete := s.after(9, 9); !complete {
		t.Fatal("the newest stream after its last event")
	}
}

func TestEventID(t *testing.T) {
	if id := EventID(3, 42); id != "3-42" {
		t.Fatal(id)
	}
	for _, bad := range []string{"", "3", "-1", "3-", "a-1", "1-b", "+1-2", "1-+2", "18446744073709551616-1", "1-2-3"} {
		if _, _, ok := ParseEventID(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if st, sq, ok := ParseEventID("0-18446744073709551615"); !ok || st != 0 || sq != 1<<64-1 {
		t.Fatal(st, sq, ok)
	}
}

// Every id parseEventID takes names the stream and seq that eventID
// writes back to an id it takes again.
func FuzzEventID(f *testing.F) {
	for _, s := range []string{"0-0", "3-42", "x", "1-", "-1", "4294967295-18446744073709551615", "01-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		st, sq, ok := ParseEventID(id)
		if !ok {
			return
		}
		st2, sq2, ok := ParseEventID(EventID(st, sq))
		if !ok || st2 != st || sq2 != sq {
			t.Fatalf("%q: %d-%d, then %d-%d %v", id, st, sq, st2, sq2, ok)
		}
	})
}
