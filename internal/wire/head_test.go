package wire

import "testing"

// HeadID finds a response's numeric id in the first bytes of a message,
// however they are cut, and tells a request by its "method".
func TestHeadID(t *testing.T) {
	cases := []struct {
		head    string
		digits  string
		request bool
	}{
		{`{"jsonrpc":"2.0","id":42,"result":`, "42", false},
		{` [ {"id": 7 , "error"`, "7", false},
		{`{"jsonrpc":"2.0","id":12`, "12", false},
		{`{"jsonrpc":"2.0","result":{"big":`, "", false},
		{`{"jsonrpc":"2.0","method":"x","id":1`, "", true},
		{`{"id":"str"`, "", false},
		{`{"jsonr`, "", false},
		{`"id":1`, "", false},
		{``, "", false},
	}
	for _, c := range cases {
		digits, request := HeadID([]byte(c.head))
		if string(digits) != c.digits || request != c.request {
			t.Errorf("HeadID(%q) = %q, %v; want %q, %v", c.head, digits, request, c.digits, c.request)
		}
	}
}

// HeadID never panics and returns digits only.
func FuzzHeadID(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":42,"result":1}`, `[{"id":1}]`, `{"method":"m"}`, `{"id`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		digits, _ := HeadID(b)
		for _, d := range digits {
			if d < '0' || d > '9' {
				t.Fatalf("HeadID(%q) gave %q", b, digits)
			}
		}
	})
}
