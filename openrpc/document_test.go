package openrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
)

func TestDocumentMethods(t *testing.T) {
	doc, err := openrpc.Document(richMux(), openrpc.Info{Title: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	structure := map[string]string{"put": "either", "grow": "either", "old": "by-position", "pair": "by-position", "counts": "by-name", "plain": "either"}
	for name, want := range structure {
		if got := doc.Method(name).ParamStructure; got != want {
			t.Errorf("%s: paramStructure %q, want %q", name, got, want)
		}
	}
	put := doc.Method("put")
	b, _ := json.Marshal(put)
	for _, want := range []string{
		`"tags":[{"name":"items"}]`,
		`"errors":[{"code":1,"message":"full"}]`,
		`"examples":[{"name":"min","params":[{"name":"id","value":"a"},{"name":"created","value":"2026-01-02T03:04:05Z"},{"name":"name","value":"n"},{"name":"count","value":1},{"name":"color","value":"red"},{"name":"note","value":null}],"result":{"name":"result","value":{}}}]`,
		`{"name":"id","description":"The id, unique.","schema":{"type":"string","description":"The id, unique.","pattern":"^[a-z]+$"},"required":true}`,
		`{"name":"note","schema":{"type":["null","string"]}}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("put lacks %s\nin %s", want, b)
		}
	}
	if !doc.Method("old").Deprecated {
		t.Error("old is not deprecated")
	}
	if doc.Components == nil || doc.Components.Schemas["Tree"] == nil || doc.Components.Schemas["Item"] == nil {
		t.Errorf("components: %+v", doc.Components)
	}
}

func TestDiscoverFollowsTheMux(t *testing.T) {
	mux := jsonrpc.NewMux()
	openrpc.Register(mux, openrpc.Info{Title: "t", Version: "1"})
	ctx := context.Background()
	discover := func(params string) (*openrpc.Doc, error) {
		req := &jsonrpc.Request{Method: "rpc.discover"}
		if params != "" {
			req.Params = []byte(params)
		}
		res, err := mux.ServeRPC(ctx, req)
		if err != nil {
			return nil, err
		}
		return openrpc.ParseDocument(res.(json.RawMessage))
	}
	d1, err := discover("")
	if err != nil || len(d1.Methods) != 1 {
		t.Fatalf("%v %v", d1, err)
	}
	jsonrpc.Register(mux, "later", func(context.Context, struct{}) (int, error) { return 1, nil })
	d2, err := discover("[]")
	if err != nil || d2.Method("later") == nil {
		t.Fatalf("a method added later is missing: %v", err)
	}
	if _, err := discover(`{}`); err != nil {
		t.Errorf("{} params: %v", err)
	}
	_, err = discover(`[1]`)
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("params [1]: %v, want -32602", err)
	}
}

// TestDiscoverDeprecated checks that rpc.discover marks a deprecated method
// and names its replacement and sunset, and that the method still works.
func TestDiscoverDeprecated(t *testing.T) {
	mux := demo.Shared{}.NewMux()
	res, err := mux.ServeRPC(context.Background(), &jsonrpc.Request{Method: "rpc.discover"})
	if err != nil {
		t.Fatal(err)
	}
	raw := string(res.(json.RawMessage))
	if !strings.Contains(raw, `"name":"minus"`) || !strings.Contains(raw, `"deprecated":true,"x-replacement":"subtract","x-sunset":"2027-06-01T00:00:00Z"`) {
		t.Errorf("rpc.discover does not mark minus deprecated: %s", raw)
	}
	doc, err := openrpc.ParseDocument([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m := doc.Method("subtract"); m == nil || m.Deprecated {
		t.Errorf("subtract: %+v", m)
	}
	if d := doc.Describe(doc.Method("minus")); !strings.Contains(d, "(deprecated: use subtract)") ||
		!strings.Contains(d, "deprecated: it still works; call subtract instead; to be removed at 2027-06-01T00:00:00Z") {
		t.Errorf("Describe(minus) does not say it is deprecated:\n%s", d)
	}
	got, err := mux.ServeRPC(context.Background(), &jsonrpc.Request{Method: "minus", Params: []byte(`[42,23]`)})
	if err != nil || got != 19.0 {
		t.Errorf("minus: %v %v", got, err)
	}
}

// The subscribe method of a jsonrpc.Subscriptions carries its kinds in
// "x-subscription": each kind's params and event schemas.
func TestSubscriptionsDescribed(t *testing.T) {
	mux := jsonrpc.NewMux()
	subs := jsonrpc.NewSubscriptions(mux, jsonrpc.SubscriptionsOptions{Namespace: "feed"})
	type filter struct {
		Address string `json:"address"`
	}
	jsonrpc.AddSubscription(subs, "logs", func(ctx context.Context, p filter, sink *jsonrpc.Sink[[]string]) error { return nil })
	jsonrpc.AddSubscription(subs, "newHeads", func(ctx context.Context, _ struct{}, sink *jsonrpc.Sink[int64]) error { return nil })
	doc, err := openrpc.Document(mux, openrpc.Info{Title: "feed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(doc.Method("feed_subscribe").Subscription)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"unsubscribe":"feed_unsubscribe","notification":"feed_subscription","kinds":[` +
		`{"name":"logs","params":{"$ref":"#/components/schemas/filter"},"event":{"type":"array","items":{"type":"string"}}},` +
		`{"name":"newHeads","event":{"type":"integer"}}]}`
	if string(got) != want {
		t.Fatalf("x-subscription:\n got %s\nwant %s", got, want)
	}
	if doc.Method("feed_unsubscribe").Subscription != nil {
		t.Fatal("x-subscription on the unsubscribe method")
	}
}
