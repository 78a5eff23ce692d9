package jsonrpc

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// LogOptions tune LogCalls. The zero value (or nil) logs no params and no
// principal.
type LogOptions struct {
	// Params adds each request's params to its record, as JSON text cut to
	// MaxParams bytes (default 256). Off by default: params may hold
	// secrets.
	Params    bool
	MaxParams int
	// Principal returns who made the request ("" for nobody known), for
	// the record's principal field; nil logs none.
	Principal func(ctx context.Context) string
}

// DefaultMaxLoggedParams is how many bytes of params LogCalls logs when
// LogOptions.Params is set and MaxParams is 0.
const DefaultMaxLoggedParams = 256

// LogCalls returns a Middleware that logs one record per request to
// logger, once the handler has returned. Put it in Server.Middleware, so
// that requests for unknown methods are logged too.
//
// The record's message is "call" (or "notification"); its fields, each
// present only with a value, are method, id (JSON text), duration, outcome
// ("ok", "error" or "canceled"), code and error, transport and remote (see
// Peer), principal and params (LogOptions). The level is Info for "ok" and
// "canceled", Warn for errors the caller caused (invalid params, unknown
// method, application errors), Error for internal errors (-32603, panics
// included). Headers, and so tokens, are never logged. Protocol errors and
// connection ends never reach a handler: Server.Logger gets them at debug.
func LogCalls(logger *slog.Logger, opts *LogOptions) Middleware {
	var o LogOptions
	if opts != nil {
		o = *opts
	}
	o.MaxParams = orDefault(o.MaxParams, DefaultMaxLoggedParams)
	return func(next Handler) Handler {
		return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if !logger.Enabled(ctx, slog.LevelError) {
				return next.ServeRPC(ctx, req)
			}
			start := time.Now()
			v, err := next.ServeRPC(ctx, req)
			logCall(ctx, logger, &o, req, time.Since(start), err)
			return v, err
		})
	}
}

func logCall(ctx context.Context, logger *slog.Logger, o *LogOptions, req *Request, d time.Duration, err error) {
	code := CodeOf(err)
	level, outcome := slog.LevelInfo, "ok"
	switch code {
	case 0:
	case CodeRequestCanceled:
		outcome = "canceled"
	case CodeInternalError:
		level, outcome = slog.LevelError, "error"
	default:
		level, outcome = slog.LevelWarn, "error"
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	msg, attrs := "notification", append(make([]slog.Attr, 0, 10), slog.String("method", req.Method))
	if !req.IsNotification() {
		msg, attrs = "call", append(attrs, slog.String("id", req.ID.String()))
	}
	attrs = append(attrs, slog.Duration("duration", d), slog.String("outcome", outcome))
	if err != nil {
		text := err.Error()
		if e := (*Error)(nil); errors.As(err, &e) && e != nil { // its message alone, not "jsonrpc: code N: "
			text = e.Message
		}
		attrs = append(attrs, slog.Int64("code", code), slog.String("error", text))
	}
	attrs = appendPeer(ctx, attrs)
	if o.Principal != nil {
		if who := o.Principal(ctx); who != "" {
			attrs = append(attrs, slog.String("principal", who))
		}
	}
	if o.Params && req.Params != nil {
		attrs = append(attrs, slog.String("params", truncate(req.Params, o.MaxParams)))
	}
	logger.LogAttrs(ctx, level, msg, attrs...)
}
