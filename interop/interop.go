// Package interop checks that github.com/seedhq/jsonrpc speaks the same wire
// as other people's JSON-RPC 2.0 implementations. It is a module of its own so
// that the peers it tests against (github.com/creachadair/jrpc2, and the npm
// packages json-rpc-2.0 and vscode-jsonrpc in the node folder) never become
// dependencies of the library.
//
// The package itself only holds the service that the tests serve to those
// peers; the tests are in the _test.go files, and cmd/stdioserver serves the
// same service over standard input and output for the vscode-jsonrpc test.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
)

// PeerCall names a method of the peer and the params to send it: the params
// of ask_peer and tell_peer.
type PeerCall struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// NewMux returns the service the interop tests serve: the demo methods
// (subtract, sum, echo, get_data, error, sleep...) plus
//
//	record     stores its params by calling rec (when rec is not nil) and, on a
//	           transport with a connection, notifies the peer "recorded" with
//	           the same params; returns null. Meant to be sent as a notification.
//	ask_peer   {"method", "params"}: calls the peer back on the same connection
//	           and returns the peer's result, or the peer's error as is.
//	tell_peer  {"method", "params"}: sends the peer a notification; returns true.
//
//	items       {"n"}: a jsonrpc.Stream of n elements {"i", "s"} (s holds
//	            multi-byte UTF-8), written as it is encoded.
//	items_slice {"n"}: the same elements in a slice: the same result.
//
// ask_peer and tell_peer fail with -32603 on HTTP, which has no connection
// to call back on.
func NewMux(rec func(params json.RawMessage)) *jsonrpc.Mux {
	mux := demo.Shared{}.NewMux()
	jsonrpc.Register(mux, "record", func(ctx context.Context, p json.RawMessage) (any, error) {
		p = bytes.Clone(p) // params may share the read buffer
		if rec != nil {
			rec(p)
		}
		if err := jsonrpc.ConnFromContext(ctx).Notify(ctx, "recorded", p); !errors.Is(err, jsonrpc.ErrNoConnection) {
			return nil, err
		}
		return nil, nil // plain HTTP: no connection to echo on
	}, jsonrpc.MethodDoc{Summary: "Records its params and echoes them to the peer as a \"recorded\" notification."})

	jsonrpc.Register(mux, "ask_peer", func(ctx context.Context, p PeerCall) (json.RawMessage, error) {
		var out json.RawMessage
		err := jsonrpc.ConnFromContext(ctx).Call(ctx, p.Method, paramsOrNil(p.Params), &out)
		if errors.Is(err, jsonrpc.ErrNoConnection) {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "ask_peer: this transport has no connection to call back on")
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	}, jsonrpc.MethodDoc{Summary: "Calls the peer back and returns its answer."})

	jsonrpc.Register(mux, "tell_peer", func(ctx context.Context, p PeerCall) (bool, error) {
		err := jsonrpc.ConnFromContext(ctx).Notify(ctx, p.Method, paramsOrNil(p.Params))
		if errors.Is(err, jsonrpc.ErrNoConnection) {
			return false, jsonrpc.Errorf(jsonrpc.CodeInternalError, "tell_peer: this transport has no connection to notify on")
		}
		return err == nil, err
	}, jsonrpc.MethodDoc{Summary: "Sends the peer a notification."})
	registerItems(mux)
	return mux
}

// Item is an element of the items and items_slice results.
type Item struct {
	I int    `json:"i"`
	S string `json:"s"`
}

// ItemsParams are the params of items and items_slice.
type ItemsParams struct {
	N int `json:"n"`
}

// item is element i of items: about 200 bytes, with multi-byte UTF-8 (so
// that chunks and compressed blocks split characters) and a little
// variety (so that it does not compress to nothing).
func item(i int) Item {
	return Item{I: i, S: strconv.Itoa(i*7919) + " h\u00e9llo \u2028 \U0001F600 " + strings.Repeat(string(rune('a'+i%26)), 150)}
}

func registerItems(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "items", func(ctx context.Context, p ItemsParams) (jsonrpc.Stream[Item], error) {
		return func(yield func(Item, error) bool) {
			for i := range p.N {
				if !yield(item(i), nil) {
					return
				}
			}
		}, nil
	}, jsonrpc.MethodDoc{Summary: "Streams n items."})
	jsonrpc.Register(mux, "items_slice", func(ctx context.Context, p ItemsParams) ([]Item, error) {
		out := make([]Item, p.N)
		for i := range out {
			out[i] = item(i)
		}
		return out, nil
	}, jsonrpc.MethodDoc{Summary: "Returns the n items of items in a slice."})
}

// paramsOrNil turns absent params into a nil interface, so that no params
// member is sent.
func paramsOrNil(p json.RawMessage) any {
	if len(p) == 0 {
		return nil
	}
	return p
}
