package otel

import (
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/propagation"
)

// FuzzParamsMeta: whatever the params, adding a trace context to _meta
// gives valid JSON that reads back the same context, or leaves the params
// untouched (arrays, scalars, a _meta that is not an object); reading
// _meta never panics.
func FuzzParamsMeta(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `[1,2]`, `null`, `"x"`, `{"_meta":{"progressToken":1}}`, `{"_meta":3}`,
		`{"a":{"_meta":{"traceparent":"inner"}}}`, ` {"_meta" : {"traceparent":"00-x"} } `, `{"a":"\u00e9\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	f.Fuzz(func(t *testing.T, b []byte) {
		metaOf(b) // must not panic
		if !json.Valid(b) {
			return
		}
		out := withMeta(json.RawMessage(b), propagation.MapCarrier{"traceparent": tp})
		raw, ok := out.(json.RawMessage)
		if !ok || !json.Valid(raw) {
			t.Fatalf("withMeta(%s) = %v", b, out)
		}
		if string(raw) == string(b) {
			return // left as it was
		}
		if got := metaOf(raw)["traceparent"]; got != tp {
			t.Fatalf("withMeta(%s) = %s: traceparent %q", b, raw, got)
		}
	})
}
