// Package registry is a table of named entries that other packages fill
// in, usually from their init functions (the way database/sql drivers
// register): the jsonrpc package keeps the transports of extension URL
// schemes in one. Names built in cannot be registered, nor one name twice.
// It imports nothing of the jsonrpc package.
package registry

import (
	"errors"
	"sort"
	"sync"
)

// Errors of Register.
var (
	ErrReserved  = errors.New("registry: the name is built in or empty")
	ErrDuplicate = errors.New("registry: the name is registered already")
)

// Registry maps names to entries of type T. The zero value is empty; it is
// safe for concurrent use.
type Registry[T any] struct {
	// Builtin lists the names that cannot be registered (set once, before
	// any use).
	Builtin map[string]bool

	mu      sync.RWMutex
	entries map[string]T
}

// Register adds entry under name. It fails with ErrReserved when name is
// empty or built in, and with ErrDuplicate when it is taken.
func (r *Registry[T]) Register(name string, entry T) error {
	if name == "" || r.Builtin[name] {
		return ErrReserved
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.entries[name]; dup {
		return ErrDuplicate
	}
	if r.entries == nil {
		r.entries = make(map[string]T)
	}
	r.entries[name] = entry
	return nil
}

// Lookup returns the entry registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	return e, ok
}

// Names returns, sorted, the names whose entries has accepts.
func (r *Registry[T]) Names(has func(T) bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var names []string
	for name, e := range r.entries {
		if has(e) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
