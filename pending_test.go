package jsonrpc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
)

// A batch answer that holds an id-null error before the responses it does
// have: each call with a response gets it, the call left out gets the
// error (the same rule as HTTPClient.Batch).
func TestBatchAnswerNullErrorGoesToTheCallsLeftOut(t *testing.T) {
	a, b := loopbackPair(t)
	rawPeer(t, a, func(req string) string {
		if !strings.HasPrefix(req, "[") {
			return ""
		}
		return `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"element 2 unreadable"}},` +
			`{"jsonrpc":"2.0","id":1,"result":"one"}]` + "\n"
	})
	c := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	defer c.Close()
	var one, two string
	var batch jsonrpc.Batch
	c1 := batch.Call("first", nil, &one)
	c2 := batch.Call("second", nil, &two)
	if err := c.Batch(context.Background(), &batch); err != nil {
		t.Fatal(err)
	}
	if c1.Err != nil || one != "one" {
		t.Errorf("first call: %q %v, want its result", one, c1.Err)
	}
	var rpcErr *jsonrpc.Error
	if !errors.As(c2.Err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("second call: %v, want the id-null error", c2.Err)
	}
}
