package jsonrpc

import "context"

// Invoker sends a client's messages: what an [Interceptor] wraps.
type Invoker interface {
	Call(ctx context.Context, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
	Batch(ctx context.Context, b *Batch) error
}

// Interceptor is the client-side twin of server middleware: it returns an
// Invoker that does its work (headers, auth refresh, logging, metrics,
// retries of methods the caller knows to be idempotent) around next's.
// An interceptor may change a batch's elements' Params (Batch.Calls) before
// calling next, and must put them back after.
//
// A [CallIter] call comes as a Call whose result is CallIter's own value:
// pass it on to next as is. The loop's body runs inside next's Call, which
// fails if the loop breaks off; once elements have reached the loop, a
// retry fails, saying so, and CallIter yields that error.
type Interceptor func(next Invoker) Invoker

// WithInterceptors makes the client's Call, Notify and Batch go through
// the interceptors, the first outermost, on every client Dial makes (and
// NewHTTPClient, DialCommand, DialStreamableHTTP, NewMessageClient; on
// each endpoint of DialFailover and each connection of a ReconnectClient,
// so once per attempt). Calls the library makes for itself (subscribe and
// unsubscribe included) go through them too.
func WithInterceptors(ics ...Interceptor) DialOption {
	return func(c *dialConfig) { c.interceptors = append(c.interceptors, ics...) }
}

// Intercept returns c with its Call, Notify and Batch going through the
// interceptors, the first outermost; Close closes c.
func Intercept(c Client, ics ...Interceptor) Client {
	return &intercepted{Invoker: chain(c, ics), c: c}
}

type intercepted struct {
	Invoker
	c Client
}

func (i *intercepted) Close() error { return i.c.Close() }

// chain wraps last in the interceptors, the first outermost.
func chain(last Invoker, ics []Interceptor) Invoker {
	for i := len(ics) - 1; i >= 0; i-- {
		last = ics[i](last)
	}
	return last
}

// chain returns the options' interceptors around direct, or nil when there
// are none (the client then calls directly, at no cost).
func (cfg *dialConfig) chain(direct Invoker) Invoker {
	if len(cfg.interceptors) == 0 {
		return nil
	}
	return chain(direct, cfg.interceptors)
}

// direct is a client's own sending (a Conn's, an HTTPClient's), below its
// interceptors.
type direct struct {
	c interface {
		callDirect(ctx context.Context, method string, params, result any) error
		notifyDirect(ctx context.Context, method string, params any) error
		batchDirect(ctx context.Context, b *Batch) error
	}
}

func (d direct) Call(ctx context.Context, method string, params, result any) error {
	return d.c.callDirect(ctx, method, params, result)
}
func (d direct) Notify(ctx context.Context, method string, params any) error {
	return d.c.notifyDirect(ctx, method, params)
}
func (d direct) Batch(ctx context.Context, b *Batch) error { return d.c.batchDirect(ctx, b) }
