package mcp

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/state"
)

// The requestState of a multi round-trip request (MCP 2026-07-28,
// basic/patterns/mrtr): the answers a client gave so far, bound to the
// request and its principal, with an expiry, authenticated with
// HMAC-SHA256 so that any instance holding the key trusts it and a client
// cannot forge or move it.
//
// Two forms, told apart by their number of dots:
//
//	v1  PAYLOAD.MAC      signed with a static key, verified by trying each
//	v2  KID.PAYLOAD.MAC  signed with the key ring's key KID, verified by it
//
// each part base64url without padding; PAYLOAD is statePayload's JSON and
// MAC is HMAC-SHA256 over a tag naming the form, then the parts before it.
// A v1 state stays valid when a server moves to a ring (the ring's keys
// and the static ones verify it); a v2 state whose KID the ring no longer
// holds is refused as a forged one is.

// Errors of a requestState that cannot be trusted (the root package sets
// the first two to its own in init).
var (
	ErrStateInvalid = errors.New("jsonrpc: requestState is malformed, forged or for another request")
	ErrStateExpired = errors.New("jsonrpc: requestState expired")
	ErrStateKey     = errors.New("jsonrpc: InputRounds needs a key of 16 bytes or more")
)

// statePayload is what a requestState carries, authenticated.
type statePayload struct {
	Answers map[string]json.RawMessage `json:"a"`           // every answer so far, by key
	Binding string                     `json:"b"`           // digest of method, subject and params
	Expires int64                      `json:"x"`           // unix seconds
	Data    json.RawMessage            `json:"d,omitempty"` // reserved
}

// StateKeys are the keys of one request's requestState: Static
// (InputRounds.Keys, newest first) and Ring (InputRounds.KeyRing, nil for
// none), which is read once, when a state is first signed or verified.
type StateKeys struct {
	Static [][]byte
	Ring   state.KeyRing

	ring []state.Key
	read bool
}

// ringKeys returns the ring's keys, reading it on the first call; a ring
// that fails gives its error, wrapped.
func (k *StateKeys) ringKeys(ctx context.Context) ([]state.Key, error) {
	if !k.read {
		keys, err := k.Ring.Keys(ctx)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: InputRounds.KeyRing: %w", err)
		}
		k.ring, k.read = keys, true
	}
	return k.ring, nil
}

// Binding digests what a state is bound to: the method, the principal
// (subject) and the request's salient params (target: its name or uri,
// and its arguments, compacted).
func Binding(method, subject, target string, arguments []byte) string {
	h := sha256.New()
	for _, s := range []string{method, subject, target} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(arguments)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Seal returns the requestState carrying answers, bound to binding, valid
// until expires: v2, signed by the ring's newest key, when k has a ring
// (ErrStateKey when it holds none); else v1, signed by Static[0].
func (k *StateKeys) Seal(ctx context.Context, answers map[string]json.RawMessage, binding string, expires time.Time) (string, error) {
	prefix, key := "", []byte(nil)
	if k.Ring != nil {
		keys, err := k.ringKeys(ctx)
		if err != nil {
			return "", err
		}
		if len(keys) == 0 {
			return "", fmt.Errorf("%w: InputRounds.KeyRing holds no key", ErrStateKey)
		}
		prefix, key = base64.RawURLEncoding.EncodeToString([]byte(keys[0].ID))+".", keys[0].Secret
	} else if len(k.Static) > 0 {
		key = k.Static[0]
	}
	if len(key) < state.MinKeyBytes {
		return "", ErrStateKey
	}
	body, err := jsonv2.Marshal(statePayload{Answers: answers, Binding: binding, Expires: expires.Unix()})
	if err != nil {
		return "", err
	}
	signed := prefix + base64.RawURLEncoding.EncodeToString(body)
	return signed + "." + base64.RawURLEncoding.EncodeToString(stateMAC(key, signed)), nil
}

// Open verifies a requestState and returns its answers: a MAC by the key
// its form names (else ErrStateInvalid), bound to binding (else
// ErrStateInvalid), not expired at now (else ErrStateExpired); a ring that
// fails gives its error.
func (k *StateKeys) Open(ctx context.Context, s, binding string, now time.Time) (map[string]json.RawMessage, error) {
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 {
		return nil, ErrStateInvalid
	}
	signed := s[:dot]
	mac, err := base64.RawURLEncoding.DecodeString(s[dot+1:])
	if err != nil {
		return nil, ErrStateInvalid
	}
	valid, err := k.verify(ctx, signed, mac)
	if err != nil {
		return nil, err
	}
	enc := signed[strings.IndexByte(signed, '.')+1:] // the payload, after the key id of v2
	body, err := base64.RawURLEncoding.DecodeString(enc)
	var p statePayload
	if !valid || err != nil || jsonv2.Unmarshal(body, &p) != nil || p.Binding != binding {
		return nil, ErrStateInvalid
	}
	if now.Unix() >= p.Expires {
		return nil, ErrStateExpired
	}
	return p.Answers, nil
}

// verify reports whether mac is the MAC of signed by the key its form
// names: for v2 the ring's key of its id, for v1 any static key or, with a
// ring, any of the ring's.
func (k *StateKeys) verify(ctx context.Context, signed string, mac []byte) (bool, error) {
	kid, rest, v2 := strings.Cut(signed, ".")
	var id []byte
	if v2 {
		var err error
		if id, err = base64.RawURLEncoding.DecodeString(kid); err != nil || k.Ring == nil || strings.IndexByte(rest, '.') >= 0 {
			return false, nil
		}
	} else {
		for _, key := range k.Static {
			if hmac.Equal(mac, stateMAC(key, signed)) {
				return true, nil
			}
		}
		if k.Ring == nil {
			return false, nil
		}
	}
	keys, err := k.ringKeys(ctx)
	if err != nil {
		return false, err
	}
	for _, key := range keys {
		if (!v2 || key.ID == string(id)) && hmac.Equal(mac, stateMAC(key.Secret, signed)) {
			return true, nil
		}
	}
	return false, nil
}

// Answers returns the answers a request brings: those its requestState
// carries (s; "" for none), verified by keys as Open verifies it, with its
// inputResponses (given) over them. A state that cannot be trusted is
// refused with an *Error, -32602 (invalid params) naming why; a key ring
// that fails gives its error.
func Answers(ctx context.Context, keys *StateKeys, s, binding string, now time.Time, given map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	if s != "" {
		kept, err := keys.Open(ctx, s, binding, now)
		if errors.Is(err, ErrStateInvalid) || errors.Is(err, ErrStateExpired) {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
		} else if err != nil {
			return nil, err
		}
		maps.Copy(answers, kept)
	}
	maps.Copy(answers, given)
	return answers, nil
}

// capabilityOf is the client capability a server's request for input needs.
var capabilityOf = map[string]string{"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}

// MissingCapability is the error of a server's request for input that
// needs a capability the client did not declare (has reports which it
// did): -32021 naming it; nil when none is missing.
func MissingCapability(method string, has func(capability string) bool) *Error {
	name := capabilityOf[method]
	if name == "" || has(name) {
		return nil
	}
	data, _ := codec.Marshal(map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}})
	return &Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + name, Data: data}
}

// stateMAC is the MAC of a state's signed parts (v2 has a dot in them).
func stateMAC(key []byte, signed string) []byte {
	h := hmac.New(sha256.New, key)
	if strings.IndexByte(signed, '.') >= 0 {
		h.Write([]byte("mcp-request-state-v2\x00"))
	} else {
		h.Write([]byte("mcp-request-state-v1\x00"))
	}
	h.Write([]byte(signed))
	return h.Sum(nil)
}
