package jsonrpc

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Multi round-trip requests (MCP 2026-07-28, basic/patterns/mrtr): a
// server that needs input from the client (elicitation, sampling, roots)
// does not call the client; it answers the request with an
// InputRequiredResult naming what it needs, and the client sends the
// request again (a new id) with the answers in inputResponses and the
// opaque requestState it was given. InputRounds lets one handler serve
// both eras: Ask calls the client over the session under 2025-11-25, and
// under 2026-07-28 replays the answers the client brought back, answering
// what is still missing with an *InputRequiredError.

// DefaultRequestStateTTL is how long a requestState stays valid
// (InputRounds.TTL).
const DefaultRequestStateTTL = 10 * time.Minute

// Errors of a requestState that cannot be trusted; the request gets
// -32602 (invalid params) wrapping one of them.
var (
	ErrRequestStateInvalid = errors.New("jsonrpc: requestState is malformed, forged or for another request")
	ErrRequestStateExpired = errors.New("jsonrpc: requestState expired")
)

// InputRequest is one request for input from the client: elicitation/create,
// sampling/createMessage or roots/list, with its params.
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitzero"`
}

// InputRequiredResult is MCP's interim result (resultType "input_required").
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitzero"`
	RequestState  string                  `json:"requestState,omitzero"`
}

// InputRequiredError is what Ask returns under the stateless revision when
// the client has not answered yet: the handler returns it, and the method's
// result is Result (tools/call, prompts/get, resources/read may answer so).
type InputRequiredError struct{ Result InputRequiredResult }

func (e *InputRequiredError) Error() string { return "jsonrpc: input required from the client" }

// InputRounds asks an MCP client for input in the way of the request's era.
// Its zero value is not usable: set Keys.
type InputRounds struct {
	// Keys authenticate requestState (HMAC-SHA256), newest first: the first
	// signs, any verifies, so that a key can be rotated in before the old
	// one is dropped. Every instance behind a load balancer has the same.
	Keys [][]byte
	// TTL bounds the life of a requestState (default DefaultRequestStateTTL).
	TTL time.Duration
	// Subject names the principal of the request a state is bound to, so
	// that one client's state is refused from another (default: the
	// request's Authorization header).
	Subject func(ctx context.Context) string
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// statePayload is what a requestState carries, authenticated.
type statePayload struct {
	Answers map[string]json.RawMessage `json:"a"`           // every answer so far, by key
	Binding string                     `json:"b"`           // digest of method, subject and params
	Expires int64                      `json:"x"`           // unix seconds
	Data    json.RawMessage            `json:"d,omitempty"` // reserved
}

// Ask asks the client the request under key and decodes its answer into
// result. Under 2025-11-25 (no MCPMeta in ctx) it calls the client over
// the request's connection (the session's stream) and waits. Under
// 2026-07-28 it finds the answer in the request's inputResponses or in its
// verified requestState; without one it returns an *InputRequiredError
// asking for it, whose requestState keeps the answers given so far. A
// client that did not declare the capability the request needs
// (elicitation, sampling, roots) gets -32021.
func (ir *InputRounds) Ask(ctx context.Context, key string, req InputRequest, result any) error {
	m := MCPMetaFromContext(ctx)
	if m == nil {
		c := connFromContext(ctx)
		if c == nil {
			return &Error{Code: CodeInternalError, Message: "internal error: no connection to ask the client on"}
		}
		return c.Call(ctx, req.Method, req.Params, result)
	}
	if capName := capabilityOf(req.Method); capName != "" && !m.HasCapability(capName) {
		return (&Error{Code: CodeMissingClientCapability, Message: "Missing required client capability: " + capName}).WithData(map[string]any{"requiredCapabilities": map[string]any{capName: map[string]any{}}})
	}
	answers, err := ir.answers(ctx, m)
	if err != nil {
		return err
	}
	if raw, ok := answers[key]; ok {
		return wire.Unmarshal(raw, result)
	}
	state, err := ir.seal(ctx, m, answers)
	if err != nil {
		return err
	}
	return &InputRequiredError{Result: InputRequiredResult{ResultType: "input_required", InputRequests: map[string]InputRequest{key: req}, RequestState: state}}
}

func capabilityOf(method string) string {
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

// answers returns the answers of the request: those its verified
// requestState carries, and its inputResponses.
func (ir *InputRounds) answers(ctx context.Context, m *MCPMeta) (map[string]json.RawMessage, error) {
	answers := map[string]json.RawMessage{}
	if m.RequestState != "" {
		p, err := ir.open(ctx, m, m.RequestState)
		if err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params: " + err.Error()}
		}
		for k, v := range p.Answers {
			answers[k] = v
		}
	}
	for k, v := range m.InputResponses {
		answers[k] = v
	}
	return answers, nil
}

func (ir *InputRounds) now() time.Time {
	if ir.Now != nil {
		return ir.Now()
	}
	return time.Now()
}

// binding digests what a state is bound to: the method, the principal and
// the request's salient params (name or uri, and arguments).
func (ir *InputRounds) binding(ctx context.Context, m *MCPMeta) string {
	subject := ""
	if ir.Subject != nil {
		subject = ir.Subject(ctx)
	} else if p, ok := PeerFromContext(ctx); ok && p.Header != nil {
		subject = p.Header.Get("Authorization")
	}
	h := sha256.New()
	for _, s := range []string{m.Method, subject, m.target} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(m.arguments)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// seal returns the requestState carrying answers, signed with Keys[0].
func (ir *InputRounds) seal(ctx context.Context, m *MCPMeta, answers map[string]json.RawMessage) (string, error) {
	if len(ir.Keys) == 0 || len(ir.Keys[0]) < 16 {
		return "", errors.New("jsonrpc: InputRounds needs a key of 16 bytes or more")
	}
	ttl := ir.TTL
	if ttl <= 0 {
		ttl = DefaultRequestStateTTL
	}
	body, err := jsonv2.Marshal(statePayload{Answers: answers, Binding: ir.binding(ctx, m), Expires: ir.now().Add(ttl).Unix()})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(stateMAC(ir.Keys[0], enc)), nil
}

// open verifies a requestState: a MAC by one of Keys, not expired, bound
// to this method, principal and params.
func (ir *InputRounds) open(ctx context.Context, m *MCPMeta, state string) (*statePayload, error) {
	enc, sig, ok := strings.Cut(state, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil {
		return nil, ErrRequestStateInvalid
	}
	valid := false
	for _, k := range ir.Keys {
		valid = valid || hmac.Equal(mac, stateMAC(k, enc))
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	var p statePayload
	if !valid || err != nil || jsonv2.Unmarshal(body, &p) != nil || p.Binding != ir.binding(ctx, m) {
		return nil, ErrRequestStateInvalid
	}
	if ir.now().Unix() >= p.Expires {
		return nil, ErrRequestStateExpired
	}
	return &p, nil
}

func stateMAC(key []byte, enc string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("mcp-request-state-v1\x00"))
	h.Write([]byte(enc))
	return h.Sum(nil)
}

// compactJSON returns raw without insignificant white space (nil stays nil).
func compactJSON(raw []byte) []byte {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
