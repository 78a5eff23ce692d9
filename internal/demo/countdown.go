package demo

import (
	"context"
	"errors"
	"time"

	"github.com/seedhq/jsonrpc"
)

// CountdownParams are the params of "countdown".
type CountdownParams struct {
	N          int   `json:"n" jsonschema:"notifications to send before the answer, 1 to 100"`
	IntervalMS int64 `json:"interval_ms,omitempty" jsonschema:"milliseconds between them, at most 1000"`
}

// registerCountdown adds "countdown": the handler notifies its caller n
// times ("countdown" {"remaining": n-1 … 0}) during the call, then answers
// "liftoff". Over transports without a connection to the caller (plain
// HTTP) it only answers. It shows notifications travelling during a call,
// on streams, WebSocket and Streamable HTTP alike.
func registerCountdown(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "countdown", func(ctx context.Context, p CountdownParams) (string, error) {
		if p.N < 1 || p.N > 100 || p.IntervalMS < 0 || p.IntervalMS > 1000 {
			return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "invalid params: n must be between 1 and 100, interval_ms between 0 and 1000")
		}
		c := jsonrpc.ConnFromContext(ctx)
		for k := p.N - 1; k >= 0; k-- {
			err := c.Notify(ctx, "countdown", map[string]int{"remaining": k})
			if errors.Is(err, jsonrpc.ErrNoConnection) {
				break // plain HTTP: nothing to notify on, the answer alone
			}
			if err != nil {
				return "", err
			}
			if k > 0 && p.IntervalMS > 0 {
				select {
				case <-time.After(time.Duration(p.IntervalMS) * time.Millisecond):
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}
		}
		return "liftoff", nil
	}, jsonrpc.MethodDoc{Summary: `Notifies the caller n times ("countdown" {"remaining": k}) during the call, then returns "liftoff".`})
}
