package openrpc_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

type SubtractParams struct {
	Minuend    float64 `json:"minuend" jsonschema:"The number to subtract from."`
	Subtrahend float64 `json:"subtrahend" jsonschema:"The number subtracted."`
}

// A service with discovery and validation: two lines besides the methods.
func Example() {
	mux := jsonrpc.NewMux()
	mux.Use(openrpc.Validate(mux)) // check params against the schemas
	jsonrpc.Register(mux, "subtract", func(_ context.Context, p SubtractParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	}, jsonrpc.MethodDoc{Summary: "Subtracts subtrahend from minuend."})
	openrpc.Register(mux, openrpc.Info{Title: "calc", Version: "1.0.0"}) // serve rpc.discover

	res, _ := mux.ServeRPC(context.Background(), &jsonrpc.Request{Method: "rpc.discover"})
	doc, _ := openrpc.ParseDocument(res.(json.RawMessage))
	for _, m := range doc.Methods {
		fmt.Println(m.Signature())
	}

	_, err := mux.ServeRPC(context.Background(), &jsonrpc.Request{Method: "subtract", Params: []byte(`{"minuend":"42"}`)})
	e := err.(*jsonrpc.Error)
	fmt.Println(e.Code, e.Message)
	fmt.Println(string(e.Data))
	// Output:
	// rpc.discover() object
	// subtract(minuend number, subtrahend number) number
	// -32602 invalid params: /minuend: expected number, got string (and 1 more)
	// [{"path":"/minuend","problem":"expected number, got string"},{"path":"/subtrahend","problem":"missing required member"}]
}

func ExampleSchemaFor() {
	type Args struct {
		A    float64 `json:"a" jsonschema:"The first number."`
		B    float64 `json:"b"`
		Mode string  `json:"mode,omitempty" jsonschema:"enum=fast|exact"`
	}
	s, _ := openrpc.SchemaFor[Args]()
	b, _ := json.Marshal(s)
	fmt.Println(string(b))
	// Output:
	// {"type":"object","properties":{"a":{"type":"number","description":"The first number."},"b":{"type":"number"},"mode":{"type":"string","enum":["fast","exact"]}},"required":["a","b"],"additionalProperties":false}
}

func ExampleDoc_CheckParams() {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "subtract", func(_ context.Context, p SubtractParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	doc, _ := openrpc.Document(mux, openrpc.Info{Title: "calc", Version: "1"})
	problems, _ := doc.CheckParams("subtract", []byte(`[42,"23",1]`))
	for _, p := range problems {
		fmt.Printf("%q: %s\n", p.Path, p.Problem)
	}
	// Output:
	// "/1": expected number, got string
	// "": too many params: expected at most 2, got 3
}
