package jsonrpc

import (
	"errors"
	"testing"

	"github.com/seedhq/jsonrpc/internal/convention"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/pubsub"
	"github.com/seedhq/jsonrpc/internal/resultstream"
	"github.com/seedhq/jsonrpc/internal/sse"
)

// The internal packages return this package's errors, not look-alikes: a
// user's errors.Is against an exported error matches whichever package
// raised it.
func TestInternalErrorsAreExported(t *testing.T) {
	for _, c := range []struct {
		name          string
		internal, own error
	}{
		{"sse.ErrEventTooLarge", sse.ErrEventTooLarge, ErrEventTooLarge},
		{"sse.ErrBacklog", sse.ErrBacklog, ErrStreamBacklog},
		{"sse.ErrEnded", sse.ErrEnded, ErrClosed},
		{"framing.ErrInterrupted", framing.ErrInterrupted, ErrRecvInterrupted},
		{"resultstream.ErrInvalidResponse", resultstream.ErrInvalidResponse, ErrInvalidResponse},
		{"pubsub.ErrClosed", pubsub.ErrClosed, ErrSubscriptionClosed},
		{"pubsub.ErrOverflow", pubsub.ErrOverflow, ErrSubscriptionOverflow},
		{"convention.ErrNotIncreasing", convention.ErrNotIncreasing, ErrProgressNotIncreasing},
		{"mcp.ErrStateInvalid", mcp.ErrStateInvalid, ErrRequestStateInvalid},
		{"mcp.ErrStateExpired", mcp.ErrStateExpired, ErrRequestStateExpired},
		{"mcp.ErrTooManyInputRounds", mcp.ErrTooManyInputRounds, ErrTooManyInputRounds},
		{"mcp.ErrToolRejected", mcp.ErrToolRejected, ErrToolRejected},
	} {
		if c.internal != c.own {
			t.Errorf("%s is not this package's error: %v", c.name, c.internal)
		}
	}
	if !errors.Is(ErrEventTooLarge, ErrMessageTooLarge) {
		t.Error("ErrEventTooLarge does not match ErrMessageTooLarge")
	}
}
