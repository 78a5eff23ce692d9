package jsonrpc

import (
	"context"
	"errors"
	"slices"
)

// Client is what every transport's client offers: [Conn] (streams and
// WebSocket) and [HTTPClient] implement it.
type Client interface {
	// Call sends a request and decodes the result into result (a pointer,
	// or nil to discard it). An error response is returned as an *Error.
	Call(ctx context.Context, method string, params, result any) error
	// Notify sends a notification; no response comes back.
	Notify(ctx context.Context, method string, params any) error
	// Batch sends several calls and notifications as one batch message.
	Batch(ctx context.Context, b *Batch) error
	// Close releases the client's resources.
	Close() error
}

// Batch collects calls and notifications to send together as one message.
//
//	var b jsonrpc.Batch
//	sum := b.Call("sum", []int{1, 2}, &total)
//	b.Notify("log", map[string]string{"msg": "hi"})
//	if err := client.Batch(ctx, &b); err != nil { ... } // transport failure
//	if sum.Err != nil { ... }                           // this call's error
type Batch struct {
	elems []*BatchCall
	slab  []BatchCall // where the next BatchCalls are made, several per allocation
}

// BatchCall is one element of a [Batch]. After the batch has been sent, Err
// holds the call's error (an *Error from the server) and the result has
// been decoded into the pointer given to Batch.Call.
type BatchCall struct {
	Method string
	Params any
	Err    error

	result any
	notify bool
}

// Call adds a call whose result is decoded into result (a pointer, or nil).
func (b *Batch) Call(method string, params, result any) *BatchCall {
	return b.add(BatchCall{Method: method, Params: params, result: result})
}

// add appends c, kept in the slab (a full slab is left to the calls
// already made from it, whose pointers stay valid).
func (b *Batch) add(c BatchCall) *BatchCall {
	if len(b.slab) == cap(b.slab) {
		b.slab = make([]BatchCall, 0, min(max(2*cap(b.slab), 8), 256))
		b.elems = slices.Grow(b.elems, cap(b.slab)) // room for the slab's calls
	}
	b.slab = append(b.slab, c)
	b.elems = append(b.elems, &b.slab[len(b.slab)-1])
	return b.elems[len(b.elems)-1]
}

// Notify adds a notification.
func (b *Batch) Notify(method string, params any) {
	b.add(BatchCall{Method: method, Params: params, notify: true})
}

// Calls returns the batch's calls and notifications, in order. Middleware
// for clients (tracing) may change their Params before the batch is sent.
func (b *Batch) Calls() []*BatchCall { return b.elems }

// IsNotification reports whether the element is a notification.
func (c *BatchCall) IsNotification() bool { return c.notify }

// Len returns the number of calls and notifications in the batch.
func (b *Batch) Len() int { return len(b.elems) }

func (c *BatchCall) finish(result []byte, err error, strict bool) {
	if c.Err = err; err == nil {
		c.Err = decodeResult(c.Method, result, c.result, strict)
	}
}

// ErrNoResponse is the Err of a batch call the peer's answer to the batch left out.
var ErrNoResponse = errors.New("jsonrpc: the server sent no response for this call")
