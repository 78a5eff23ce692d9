package otel

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"go.opentelemetry.io/otel/propagation"
)

func unmarshal(b []byte, v any) error { return jsonv2.Unmarshal(b, v) }

// metaOf returns the string members of params._meta (traceparent,
// tracestate, baggage), or nil when params has no _meta object.
func metaOf(params []byte) propagation.MapCarrier {
	p := bytes.TrimLeft(params, " \t\r\n")
	if len(p) == 0 || p[0] != '{' || !bytes.Contains(p, []byte(`"_meta"`)) {
		return nil
	}
	var v struct {
		Meta map[string]any `json:"_meta"`
	}
	if unmarshal(p, &v) != nil || len(v.Meta) == 0 {
		return nil
	}
	carrier := propagation.MapCarrier{}
	for k, val := range v.Meta {
		if s, ok := val.(string); ok {
			carrier[k] = s
		}
	}
	return carrier
}

// withMeta returns params with the carrier's fields added to its _meta
// member (created if need be). Params that are not a JSON object (nor
// absent) are returned unchanged.
func withMeta(params any, carrier propagation.MapCarrier) any {
	if len(carrier) == 0 {
		return params
	}
	var raw []byte
	switch p := params.(type) {
	case nil:
		raw = []byte("{}")
	case json.RawMessage:
		raw = p
	default:
		var err error
		if raw, err = jsonv2.Marshal(params); err != nil {
			return params // the client reports the error
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return params
	}
	var obj map[string]json.RawMessage
	if unmarshal(raw, &obj) != nil {
		return params
	}
	meta := map[string]any{}
	if old, ok := obj["_meta"]; ok && unmarshal(old, &meta) != nil {
		return params // a _meta that is not an object: leave it be
	}
	for k, v := range carrier {
		meta[k] = v
	}
	b, err := jsonv2.Marshal(meta)
	if err != nil {
		return params
	}
	obj["_meta"] = b
	out, err := jsonv2.Marshal(obj, jsonv2.Deterministic(true))
	if err != nil {
		return params
	}
	return json.RawMessage(out)
}
