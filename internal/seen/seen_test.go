package seen

import (
	"sync"
	"testing"
)

func TestFirst(t *testing.T) {
	s := Set[string]{Max: 2}
	for i, c := range []struct {
		key   string
		first bool
	}{
		{"a", true}, {"a", false}, {"b", true}, {"b", false}, {"a", false},
		{"c", true},  // over the bound: the set starts afresh with c
		{"a", true},  // forgotten
		{"c", false}, // kept
	} {
		if got := s.First(c.key); got != c.first {
			t.Fatalf("step %d: First(%q) = %v, want %v", i, c.key, got, c.first)
		}
	}
}

func TestFirstOnceAmongConcurrentCallers(t *testing.T) {
	s := Set[int]{Max: 1000}
	var wg sync.WaitGroup
	var mu sync.Mutex
	firsts := 0
	for range 8 {
		wg.Go(func() {
			for k := range 100 {
				if s.First(k) {
					mu.Lock()
					firsts++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if firsts != 100 {
		t.Fatalf("%d firsts among 8 callers of 100 keys, want 100", firsts)
	}
}
