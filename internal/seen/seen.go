// Package seen is a set of keys that remembers which it has seen, to do
// something once per key (a deprecated method logs its first call on each
// connection). It is bounded: past Max keys it forgets them all and starts
// afresh, so its memory stays bounded whatever the keys, at the cost of
// seeing a key for the first time again.
package seen

import "sync"

// Set is the keys seen. Set Max before use; it is safe for concurrent use.
type Set[K comparable] struct {
	Max int // the keys remembered at most (at least 1)

	mu sync.Mutex
	m  map[K]struct{}
}

// First records k and reports whether it was not in the set: the first
// time it is seen, or the first since the set last started afresh.
func (s *Set[K]) First(k K) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[k]; ok {
		return false
	}
	if s.m == nil {
		s.m = make(map[K]struct{})
	}
	if len(s.m) >= max(s.Max, 1) {
		clear(s.m)
	}
	s.m[k] = struct{}{}
	return true
}
