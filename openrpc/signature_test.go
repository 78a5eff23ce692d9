package openrpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seedhq/jsonrpc/internal/demo"
	"github.com/seedhq/jsonrpc/openrpc"
)

// TestSignaturesRoundTrip renders methods from a document that went
// through JSON and ParseDocument, as jrpc sees it.
func TestSignaturesRoundTrip(t *testing.T) {
	doc, err := openrpc.Document(richMux(), openrpc.Info{Title: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := openrpc.ParseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"counts": `counts(params map[string]integer) integer`,
		"grow":   `grow(value integer, children? [](null|Tree), parent? null|Tree) Tree`,
		"old":    `old(word string) boolean (deprecated)`,
		"paint":  `paint(color "red"|"green"|"blue", shade? "red"|"green"|"blue"|null) "red"|"green"|"blue"`,
		"pair":   `pair(x integer, y integer) integer`,
		"plain":  `plain(params any) any`,
		"when":   `when(at date-time) date-time`,
	}
	for name, sig := range want {
		m := parsed.Method(name)
		if m == nil {
			t.Errorf("no method %s", name)
			continue
		}
		if got := m.Signature(); got != sig {
			t.Errorf("%s\n got %s\nwant %s", name, got, sig)
		}
	}
	desc := parsed.Describe(parsed.Method("put"))
	for _, line := range []string{
		"  Stores an item.",
		"params: by position or by name",
		"  0. id string (required): The id, unique.",
		`  5. size "S"|"M"|"L" (optional)`,
		"  13. tree null|Tree (optional)",
		"result: null|Item",
		"errors:\n  1 full",
		`example "min": (id="a", created="2026-01-02T03:04:05Z", name="n", count=1, color="red", note=null) → {}`,
		"Tree: {value: integer, children?: [](null|Tree), parent?: null|Tree}",
	} {
		if !strings.Contains(desc, line+"\n") {
			t.Errorf("Describe lacks %q:\n%s", line, desc)
		}
	}
	// CheckParams works on the parsed document as on the original.
	ps, err := parsed.CheckParams("grow", []byte(`{"value":1,"children":[{"value":true}]}`))
	if err != nil || len(ps) != 1 || ps[0].Path != "/children/0/value" {
		t.Errorf("CheckParams on a parsed document: %v %v", ps, err)
	}
	if _, err := parsed.CheckParams("nope", nil); err == nil {
		t.Error("CheckParams of an unknown method succeeded")
	}
}

func TestDemoSignatures(t *testing.T) {
	doc, err := openrpc.Document(demo.Shared{}.NewMux(), demo.Info)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range doc.Methods {
		lines = append(lines, m.Signature())
	}
	want := `bad_result(params any) any
big(n integer) string
countdown(n integer, interval_ms? integer) string
demo_broadcast(value any, _meta? any) boolean
demo_subscribe(values ...any) string
demo_unsubscribe(id string) boolean
echo(params any) any
error(code integer, message string, data? any) any
get_data(params any) []any
minus(minuend number, subtrahend number) number (deprecated: use subtract)
notify_hello(params any) any
panic(params any) any
rpc.discover() object
sleep(ms integer) integer
subtract(minuend number, subtrahend number) number
sum(numbers ...number) number
tools/call(name string, arguments? any, _meta? any, inputResponses? any, requestState? string) CallResult|InputRequiredResult
tools/list(cursor? string, _meta? any) ListResult
update(params any) any`
	if got := strings.Join(lines, "\n"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestParseDocumentRejects(t *testing.T) {
	for _, in := range []string{`[]`, `{"openrpc":"1.3.2"}`, `{"methods":[]}`, `nope`} {
		if _, err := openrpc.ParseDocument([]byte(in)); err == nil {
			t.Errorf("ParseDocument(%s) succeeded", in)
		}
	}
}
