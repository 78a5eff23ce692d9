package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/seedhq/jsonrpc"
)

// Rule decides whether a caller may call a method. Build one with Anyone,
// Authenticated, Scope, AllScopes, Claim, Subject, Nobody or AnyOf.
type Rule struct {
	allow func(p Principal, authenticated bool) bool
	need  string // what the rule needs, for the denial's message
}

// Allows reports whether the rule lets p (authenticated or not) call.
func (r Rule) Allows(p Principal, authenticated bool) bool {
	return r.allow != nil && r.allow(p, authenticated)
}

// Anyone allows every caller, anonymous ones too.
func Anyone() Rule { return Rule{allow: func(Principal, bool) bool { return true }} }

// Nobody allows no caller.
func Nobody() Rule {
	return Rule{allow: func(Principal, bool) bool { return false }, need: "is not callable"}
}

// Authenticated allows every authenticated caller.
func Authenticated() Rule {
	return Rule{allow: func(_ Principal, ok bool) bool { return ok }, need: "needs an authenticated caller"}
}

// Scope allows callers granted any one of the scopes.
func Scope(scopes ...string) Rule {
	return Rule{allow: func(p Principal, ok bool) bool {
		return ok && slices.ContainsFunc(scopes, p.HasScope)
	}, need: "needs scope " + strings.Join(scopes, " or ")}
}

// AllScopes allows callers granted every one of the scopes.
func AllScopes(scopes ...string) Rule {
	return Rule{allow: func(p Principal, ok bool) bool {
		return ok && !slices.ContainsFunc(scopes, func(s string) bool { return !p.HasScope(s) })
	}, need: "needs scopes " + strings.Join(scopes, " and ")}
}

// Subject allows the callers with one of the subjects.
func Subject(subjects ...string) Rule {
	return Rule{allow: func(p Principal, ok bool) bool {
		return ok && slices.Contains(subjects, p.Subject)
	}, need: "is not allowed for this caller"}
}

// Claim allows callers whose claim name is one of values (a string claim,
// or an array of strings holding one of them).
func Claim(name string, values ...string) Rule {
	return Rule{allow: func(p Principal, ok bool) bool {
		if !ok {
			return false
		}
		switch v := p.Claims[name].(type) {
		case string:
			return slices.Contains(values, v)
		case []string:
			return slices.ContainsFunc(v, func(s string) bool { return slices.Contains(values, s) })
		case []any:
			return slices.ContainsFunc(v, func(a any) bool { s, ok := a.(string); return ok && slices.Contains(values, s) })
		}
		return false
	}, need: "needs claim " + name}
}

// AnyOf allows callers that any one of the rules allows.
func AnyOf(rules ...Rule) Rule {
	needs := make([]string, 0, len(rules))
	for _, r := range rules {
		needs = append(needs, r.need)
	}
	return Rule{allow: func(p Principal, ok bool) bool {
		return slices.ContainsFunc(rules, func(r Rule) bool { return r.Allows(p, ok) })
	}, need: strings.Join(needs, ", or ")}
}

// Policy says which callers may call which methods. Install it with
// srv.Authorize = policy.Authorize: it then holds on every transport, for
// each request of a batch on its own, before any handler runs, and
// rpc.discover lists only the methods a caller may call.
//
// A method's rule is found by its exact name, else by the longest pattern
// ending in "*" that prefixes it ("eth_*", "*"), else Default; with no
// Default, unlisted methods are denied. The zero Policy denies everything.
// A Policy is safe for concurrent use; Set may be called while it serves.
type Policy struct {
	mu      sync.RWMutex
	rules   map[string]Rule
	Default *Rule
}

// NewPolicy returns a policy with the rules of table (method or pattern →
// rule).
func NewPolicy(table map[string]Rule) *Policy {
	p := &Policy{rules: make(map[string]Rule, len(table))}
	for m, r := range table {
		p.rules[m] = r
	}
	return p
}

// Set sets the rule of a method or pattern, for instance beside the
// method's registration.
func (p *Policy) Set(method string, r Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rules == nil {
		p.rules = make(map[string]Rule)
	}
	p.rules[method] = r
}

// rule returns the rule for method.
func (p *Policy) rule(method string) (Rule, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if r, ok := p.rules[method]; ok {
		return r, true
	}
	best, found := -1, Rule{}
	for pat, r := range p.rules {
		if prefix, ok := strings.CutSuffix(pat, "*"); ok && strings.HasPrefix(method, prefix) && len(prefix) > best {
			best, found = len(prefix), r
		}
	}
	if best >= 0 {
		return found, true
	}
	if p.Default != nil {
		return *p.Default, true
	}
	return Rule{}, false
}

// Authorize reports whether the caller in ctx (FromContext) may call
// method: nil, or a *jsonrpc.Error with code jsonrpc.CodeForbidden whose
// message says what the method needs (never who the caller is).
func (p *Policy) Authorize(ctx context.Context, method string) error {
	r, ok := p.rule(method)
	if !ok {
		return &jsonrpc.Error{Code: jsonrpc.CodeForbidden, Message: "forbidden: " + method + " is not callable"}
	}
	principal, authenticated := FromContext(ctx)
	if r.Allows(principal, authenticated) {
		return nil
	}
	need := r.need
	if need == "" {
		need = "is not allowed for this caller"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeForbidden, Message: fmt.Sprintf("forbidden: %s %s", method, need)}
}
