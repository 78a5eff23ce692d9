package state

import (
	"context"
	"strconv"
	"testing"
)

// TestMemoryEventStoreLostBound keeps the records of evicted streams as
// many as MaxEvents; a stream whose record is forgotten counts as having
// lost what the forgotten ones lost.
func TestMemoryEventStoreLostBound(t *testing.T) {
	s := NewMemoryEventStore(Limits{MaxEvents: 2}, nil)
	ctx := context.Background()
	for i := range 10 {
		s.Append(ctx, strconv.Itoa(i), []byte("e"))
	}
	if len(s.lost) > 2 {
		t.Fatalf("%d lost records", len(s.lost))
	}
	for i := range 8 {
		if _, complete, _ := s.After(ctx, strconv.Itoa(i), 0); complete {
			t.Fatalf("stream %d lost its event but resumes as complete", i)
		}
	}
}
