package openrpc_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
)

// pipeConn returns a client connection to srv over an in-memory pipe.
func pipeConn(t testing.TB, srv *jsonrpc.Server) *jsonrpc.Conn {
	t.Helper()
	a, b := net.Pipe()
	server := jsonrpc.NewConn(jsonrpc.NewStream(a, jsonrpc.StreamOptions{}), srv)
	client := jsonrpc.NewConn(jsonrpc.NewStream(b, jsonrpc.StreamOptions{}), nil)
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client
}

// Types exercising every schema feature.

// Color is an enum by method.
type Color string

func (Color) JSONSchemaEnum() []any { return []any{"red", "green", "blue"} }

// Tree is recursive.
type Tree struct {
	Value    int     `json:"value"`
	Children []*Tree `json:"children,omitempty"`
	Parent   *Tree   `json:"parent,omitzero"`
}

// Base is embedded.
type Base struct {
	ID      string    `json:"id" jsonschema:"description=The id, unique.,pattern=^[a-z]+$"`
	Created time.Time `json:"created"`
}

// Celsius has its own schema.
type Celsius float64

func (Celsius) JSONSchema() *openrpc.Schema {
	return &openrpc.Schema{Type: "number", Minimum: jsonschemaPtr(-273.15), Description: "degrees Celsius"}
}

func jsonschemaPtr(f float64) *float64 { return &f }

// Item is a struct with every kind of field.
type Item struct {
	Base
	Name    string            `json:"name" jsonschema:"The item's name."`
	Count   uint8             `json:"count"`
	Color   Color             `json:"color"`
	Size    string            `json:"size,omitempty" jsonschema:"enum=S|M|L"`
	Level   int               `json:"level,omitzero" jsonschema:"minimum=1,maximum=5"`
	Tags    []string          `json:"tags,omitempty" jsonschema:"maxItems=3"`
	Attrs   map[string]int    `json:"attrs,omitempty"`
	Note    *string           `json:"note"`
	Extra   json.RawMessage   `json:"extra,omitempty"`
	Any     any               `json:"any,omitempty"`
	Temp    Celsius           `json:"temp,omitempty"`
	Tree    *Tree             `json:"tree,omitempty"`
	Pair    [2]float64        `json:"pair,omitempty"`
	Blob    []byte            `json:"blob,omitempty"`
	Quoted  int64             `json:"quoted,omitempty,string"`
	Nested  struct{ X bool }  `json:"nested,omitzero"`
	Skipped chan int          `json:"-"`
	hidden  int               //lint:ignore U1000 an unexported field the schema must leave out
	Labels  map[string]*Color `json:"labels,omitempty"`
}

func richMux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "put", func(_ context.Context, it Item) (*Item, error) { return &it, nil }, jsonrpc.MethodDoc{
		Summary:  "Stores an item.",
		Tags:     []string{"items"},
		Errors:   []*jsonrpc.Error{{Code: 1, Message: "full"}},
		Examples: []jsonrpc.Example{{Name: "min", Params: []byte(`{"id":"a","created":"2026-01-02T03:04:05Z","name":"n","count":1,"color":"red","note":null}`), Result: []byte(`{}`)}},
	})
	jsonrpc.Register(mux, "grow", func(_ context.Context, t Tree) (Tree, error) { return t, nil })
	jsonrpc.Register(mux, "old", func(_ context.Context, s string) (bool, error) { return s != "", nil }, jsonrpc.MethodDoc{Deprecated: true, ParamNames: []string{"word"}})
	jsonrpc.Register(mux, "pair", func(_ context.Context, p [2]int) (int, error) { return p[0] + p[1], nil }, jsonrpc.MethodDoc{ParamNames: []string{"x", "y"}})
	jsonrpc.Register(mux, "counts", func(_ context.Context, m map[string]int) (int, error) { return len(m), nil })
	jsonrpc.Register(mux, "paint", func(_ context.Context, p struct {
		Color Color  `json:"color"`
		Shade *Color `json:"shade"`
	}) (Color, error) {
		return p.Color, nil
	})
	jsonrpc.Register(mux, "when", func(_ context.Context, p struct {
		At time.Time `json:"at"`
	}) (time.Time, error) {
		return p.At, nil
	})
	mux.HandleFunc("plain", func(context.Context, *jsonrpc.Request) (any, error) { return 1, nil })
	return mux
}
