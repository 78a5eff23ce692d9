package registry

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := Registry[int]{Builtin: map[string]bool{"http": true}}
	for _, tc := range []struct {
		name string
		want error
	}{{"", ErrReserved}, {"http", ErrReserved}, {"nats", nil}, {"nats", ErrDuplicate}, {"amqp", nil}, {"zmq", nil}} {
		if err := r.Register(tc.name, len(tc.name)); !errors.Is(err, tc.want) {
			t.Errorf("Register(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}
	if e, ok := r.Lookup("nats"); !ok || e != 4 {
		t.Errorf("Lookup(nats) = %d, %v; want 4, true", e, ok)
	}
	if _, ok := r.Lookup("http"); ok {
		t.Error("Lookup(http) found a built-in name")
	}
	if got := r.Names(func(int) bool { return true }); !slices.Equal(got, []string{"amqp", "nats", "zmq"}) {
		t.Errorf("Names(all) = %v", got)
	}
	if got := r.Names(func(n int) bool { return n == 3 }); !slices.Equal(got, []string{"zmq"}) {
		t.Errorf("Names(len 3) = %v", got)
	}
	var empty Registry[int]
	if got := empty.Names(func(int) bool { return true }); got != nil {
		t.Errorf("empty Names = %v", got)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	var r Registry[string]
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b", "c", "d"} {
		wg.Go(func() {
			if err := r.Register(name, name); err != nil {
				t.Error(err)
			}
			r.Lookup(name)
			r.Names(func(string) bool { return true })
		})
	}
	wg.Wait()
	if got := r.Names(func(string) bool { return true }); len(got) != 4 {
		t.Errorf("Names = %v, want 4 names", got)
	}
}
