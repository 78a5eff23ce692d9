package openrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

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

// Two versions of an API side by side, each a Mux with its own rpc.discover
// and info.version, mounted by path on one HTTP server. v1 keeps "plus",
// deprecated in favour of "add" (it works, and its HTTP responses carry the
// Deprecation header); v2 has dropped it, so there it is -32601.
func Example_versions() {
	add := func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }

	v1 := jsonrpc.NewMux()
	jsonrpc.Register(v1, "add", add)
	jsonrpc.Register(v1, "plus", add, jsonrpc.MethodDoc{
		Deprecated: true, Replacement: "add",
		DeprecatedSince: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC),
		Sunset:          time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
	})
	openrpc.Register(v1, openrpc.Info{Title: "calc", Version: "1.4.0"})

	v2 := jsonrpc.NewMux()
	jsonrpc.Register(v2, "add", add)
	openrpc.Register(v2, openrpc.Info{Title: "calc", Version: "2.0.0"})

	routes := http.NewServeMux()
	routes.Handle("/v1", &jsonrpc.Server{Handler: v1, Logger: slog.New(slog.DiscardHandler)})
	routes.Handle("/v2", &jsonrpc.Server{Handler: v2})
	ts := httptest.NewServer(routes)
	defer ts.Close()

	ctx := context.Background()
	for _, version := range []string{"v1", "v2"} {
		c, _ := jsonrpc.Dial(ctx, ts.URL+"/"+version)
		var doc openrpc.Doc
		c.Call(ctx, "rpc.discover", nil, &doc)
		fmt.Println(version, "info.version", doc.Info.Version)
		for _, m := range doc.Methods {
			fmt.Println("  ", m.Signature())
		}
		var sum int
		err := c.Call(ctx, "plus", []int{1, 2}, &sum)
		var e *jsonrpc.Error
		if errors.As(err, &e) {
			fmt.Println("   plus:", e.Code, e.Message)
		} else {
			fmt.Println("   plus:", sum)
		}
		c.Close()
	}
	resp, _ := http.Post(ts.URL+"/v1", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"plus","params":[1,2]}`))
	resp.Body.Close()
	fmt.Println("Deprecation:", resp.Header.Get("Deprecation"))
	fmt.Println("Sunset:", resp.Header.Get("Sunset"))
	// Output:
	// v1 info.version 1.4.0
	//    add(arg0 integer, arg1 integer) integer
	//    plus(arg0 integer, arg1 integer) integer (deprecated: use add)
	//    rpc.discover() object
	//    plus: 3
	// v2 info.version 2.0.0
	//    add(arg0 integer, arg1 integer) integer
	//    rpc.discover() object
	//    plus: -32601 method not found: plus
	// Deprecation: @1780272000
	// Sunset: Fri, 01 Jan 2027 00:00:00 GMT
}
