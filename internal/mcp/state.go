package mcp

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/codec"
)

// The requestState of a multi round-trip request (MCP 2026-07-28,
// basic/patterns/mrtr): the answers a client gave so far, bound to the
// request and its principal, with an expiry, authenticated with
// HMAC-SHA256 so that any instance holding the key trusts it and a client
// cannot forge or move it.

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

// SealState returns the requestState carrying answers, bound to binding,
// valid until expires, signed with keys[0], the newest key (ErrStateKey
// when there is none, or it is shorter than 16 bytes).
func SealState(keys [][]byte, answers map[string]json.RawMessage, binding string, expires time.Time) (string, error) {
	if len(keys) == 0 || len(keys[0]) < 16 {
		return "", ErrStateKey
	}
	key := keys[0]
	body, err := jsonv2.Marshal(statePayload{Answers: answers, Binding: binding, Expires: expires.Unix()})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(stateMAC(key, enc)), nil
}

// OpenState verifies a requestState and returns its answers: a MAC by one
// of keys, bound to binding (else ErrStateInvalid), not expired at now
// (else ErrStateExpired).
func OpenState(keys [][]byte, state, binding string, now time.Time) (map[string]json.RawMessage, error) {
	enc, sig, ok := strings.Cut(state, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil {
		return nil, ErrStateInvalid
	}
	valid := false
	for _, k := range keys {
		valid = valid || hmac.Equal(mac, stateMAC(k, enc))
	}
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

// Answers returns the answers a request brings: those its requestState
// carries (state; "" for none), verified as OpenState verifies it, with
// its inputResponses (given) over them. A state that cannot be trusted is
// refused with -32602 (invalid params) naming why.
func Answers(keys [][]byte, state, binding string, now time.Time, given map[string]json.RawMessage) (map[string]json.RawMessage, *Error) {
	answers := map[string]json.RawMessage{}
	if state != "" {
		kept, err := OpenState(keys, state, binding, now)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
		}
		maps.Copy(answers, kept)
	}
	maps.Copy(answers, given)
	return answers, nil
}

// MissingCapability is the error of a server's request for input that
// needs a capability the client did not declare (has reports which it
// did): -32021 naming it; nil when none is missing.
func MissingCapability(method string, has func(capability string) bool) *Error {
	name := CapabilityOf(method)
	if name == "" || has(name) {
		return nil
	}
	data, _ := codec.Marshal(map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}})
	return &Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + name, Data: data}
}

func stateMAC(key []byte, enc string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("mcp-request-state-v1\x00"))
	h.Write([]byte(enc))
	return h.Sum(nil)
}

// CapabilityOf returns the client capability a server's request for input
// needs ("" for none it knows).
func CapabilityOf(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	case "roots/list":
		return "roots"
	}
	return ""
}
