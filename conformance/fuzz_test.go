package conformance

import (
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// FuzzParseReply: a server's reply, whatever its bytes, is read without a
// panic, and what is read of it is consistent.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"result":null}`, `[{"id":"a","error":{"code":-32601,"message":"x"}},1]`, `[]`, `{"a":1,"a":2}`, "{\"id\":\"\xff\"}", `nul`, `1e999999999`, `{"id":-0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := parseReply(b)
		if r.invalid == "" && len(r.items) == 0 && !r.batch {
			t.Fatalf("%q: a valid single reply with no object", b)
		}
		for _, it := range r.items {
			it.describe()
			it.code()
			if id := it.id(); id != nil {
				if same, _ := sameID(id, id); !same {
					t.Fatalf("%q: id %s differs from itself", b, id)
				}
			}
		}
	})
}

func TestSameID(t *testing.T) {
	for _, c := range []struct {
		a, b          string
		value, bytes_ bool
	}{
		{`1`, `1`, true, true},
		{`1e3`, `1000`, true, false},
		{`-0`, `0`, true, false},
		{`9007199254740993`, `9007199254740992`, false, false},
		{`"1"`, `1`, false, false},
		{`"\u00e9"`, `"é"`, true, false},
		{`"a"`, `"b"`, false, false},
		{`null`, `null`, true, true},
		{`1e999999999`, `1e999999999`, true, true},
	} {
		v, b := sameID(jsontext.Value(c.a), jsontext.Value(c.b))
		if v != c.value || b != c.bytes_ {
			t.Errorf("sameID(%s, %s) = %v, %v; want %v, %v", c.a, c.b, v, b, c.value, c.bytes_)
		}
	}
}
