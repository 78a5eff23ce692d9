package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/state"
)

// Multi round-trip requests (MCP 2026-07-28, basic/patterns/mrtr): the
// server answers with an InputRequiredResult and the client sends the
// request again with the answers; InputRounds.Ask serves both eras.

// DefaultRequestStateTTL is how long a requestState stays valid
// (InputRounds.TTL).
const DefaultRequestStateTTL = 10 * time.Minute

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
// Its zero value is not usable: set Keys or KeyRing.
type InputRounds struct {
	// Keys authenticate requestState (HMAC-SHA256), newest first: the first
	// signs, any verifies, so that a key can be rotated in before the old
	// one is dropped. Every instance behind a load balancer has the same.
	Keys [][]byte
	// KeyRing, when set, signs instead: its newest key, whose id the state
	// names, and only the key of that id verifies it (removed from the
	// ring, it refuses at once). Keys and the ring's keys still verify a
	// state signed without an id (by Keys). Keys is called once per request
	// that signs or verifies, so it must answer from memory: a rotation then
	// counts on every instance as soon as their ring shows it (nats.KeyRing:
	// its watch, or 500ms polls). A ring's error fails the request.
	KeyRing state.KeyRing
	// TTL bounds the life of a requestState (default DefaultRequestStateTTL).
	TTL time.Duration
	// Subject names the principal of the request a state is bound to, so
	// that one client's state is refused from another (default: the
	// request's Authorization header).
	Subject func(ctx context.Context) string
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// Ask asks the client the request under key and decodes its answer into
// result. Under 2025-11-25 (no MCPMeta in ctx) it calls the client over the
// session's stream and waits. Under 2026-07-28 it finds the answer in the
// request's inputResponses or verified requestState, or returns an
// *InputRequiredError asking for it (its requestState keeps the answers so
// far). A client that did not declare the capability the request needs gets
// -32021; under 2025-11-25 as its session's initialize, recorded by
// MCPStateless, declared (a session whose initialize was not seen is asked).
func (ir *InputRounds) Ask(ctx context.Context, key string, req InputRequest, result any) error {
	return ir.AskAll(ctx, []Question{{Key: key, Request: req, Result: result}})
}

// Question is one question of AskAll: its key, the request, and where its
// answer is decoded.
type Question struct {
	Key     string
	Request InputRequest
	Result  any
}

// AskAll asks several questions at once, as Ask asks one: under
// 2026-07-28 one round names every question not answered yet (one
// InputRequiredResult with several inputRequests); under 2025-11-25 each
// is a call to the client, in order. Every question's capability is
// checked before anything is asked.
func (ir *InputRounds) AskAll(ctx context.Context, qs []Question) error {
	m := MCPMetaFromContext(ctx)
	for _, q := range qs {
		if e := missingMCPCapability(ctx, q.Request.Method); e != nil {
			return e
		}
	}
	if m == nil {
		c := ConnFromContext(ctx) // a Streamable HTTP POST's opens its event stream
		if errors.Is(c.Err(), ErrNoConnection) {
			return &Error{Code: CodeInternalError, Message: "internal error: no connection to ask the client on"}
		}
		for _, q := range qs {
			if err := c.Call(ctx, q.Request.Method, q.Request.Params, q.Result); err != nil {
				return err
			}
		}
		return nil
	}
	now := time.Now
	if ir.Now != nil {
		now = ir.Now
	}
	bound := ir.binding(ctx, m)
	keys := &mcp.StateKeys{Static: ir.Keys, Ring: ir.KeyRing}
	answers, err := mcp.Answers(ctx, keys, m.RequestState, bound, now(), m.InputResponses)
	if e, ok := err.(*mcp.Error); ok {
		return (*Error)(e)
	} else if err != nil {
		return err
	}
	missing := map[string]InputRequest{}
	for _, q := range qs {
		raw, ok := answers[q.Key]
		if !ok {
			missing[q.Key] = q.Request
			continue
		}
		if err := json.Unmarshal(raw, q.Result); err != nil { // members the result does not name are ignored
			return &Error{Code: CodeInvalidParams, Message: "invalid params: inputResponses." + q.Key + ": " + err.Error()}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sealed, err := keys.Seal(ctx, answers, bound, now().Add(orDefault(ir.TTL, DefaultRequestStateTTL)))
	if err != nil {
		return err
	}
	return &InputRequiredError{Result: InputRequiredResult{ResultType: "input_required", InputRequests: missing, RequestState: sealed}}
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
	return mcp.Binding(m.Method, subject, m.target, m.arguments)
}
