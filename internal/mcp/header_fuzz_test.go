package mcp

import (
	"net/http"
	"testing"
)

// FuzzMCPHeaderValue: any string survives EncodeHeaderValue and
// DecodeHeaderValue unchanged, and the encoded value is a valid header
// value (visible ASCII and space).
func FuzzMCPHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", " padded ", "Grüße", "=?base64?literal?=", "=?base64?", "line1\nline2", "\x00", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("EncodeHeaderValue(%q) = %q: byte %#x", s, enc, enc[i])
			}
		}
		if got, ok := DecodeHeaderValue(enc); !ok || got != s {
			t.Fatalf("EncodeHeaderValue(%q) = %q decodes to %q, %v", s, enc, got, ok)
		}
	})
}

// FuzzMcpParamHeaders: any schema, arguments and header value are checked
// without a panic, and arguments mirrored by the client's rule pass the
// server's.
func FuzzMcpParamHeaders(f *testing.F) {
	f.Add(`{"properties":{"r":{"type":"string","x-mcp-header":"R"},"o":{"properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, `{"r":"x","o":{"n":3}}`, "x")
	f.Add(`{"properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}`, `{"b":true}`, "true")
	f.Fuzz(func(t *testing.T, schema, args, value string) {
		annotations, _ := ParamHeadersOf([]byte(schema))
		hd := http.Header{}
		for _, a := range annotations {
			hd.Set(ParamPrefix+a.Name, value)
		}
		_ = CheckParamHeaders(hd, annotations, []byte(args))
		mirrored := http.Header{}
		for _, a := range annotations {
			if v, ok := ValueAt([]byte(args), a.Path); ok {
				if text, ok := HeaderText(v, a.Kind); ok {
					mirrored.Set(ParamPrefix+a.Name, EncodeHeaderValue(text))
				}
			}
		}
		if e := CheckParamHeaders(mirrored, annotations, []byte(args)); e != nil && !valueOfOtherType(annotations, args) {
			t.Fatalf("mirrored headers %v refused: %v", mirrored, e)
		}
	})
}

// valueOfOtherType reports whether an annotated argument holds a value
// its type does not allow (which no header can mirror).
func valueOfOtherType(annotations []ParamHeader, args string) bool {
	for _, a := range annotations {
		if v, ok := ValueAt([]byte(args), a.Path); ok {
			if _, ok := HeaderText(v, a.Kind); !ok {
				return true
			}
		}
	}
	return false
}
