package wire

import (
	"bytes"
	"testing"
)

func TestResponseID(t *testing.T) {
	for _, tc := range []struct {
		in, id string // id "": none found
	}{
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"a\xffb\"}", "7"},
		{"{\"jsonrpc\":\"2\xff0\",\"id\":12,\"result\":{\"x\":[1,\"\xff\"]}}", "12"},
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\xff}", "7"},                     // the result begun is enough
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-1,\"m\xff\":1}}", "7"}, // an error
		{"{\"jsonrpc\":\"2.0\",\"id\":7\xff,\"result\":1}", ""},                     // the id cut short: it may have been 70
		{"{\"jsonrpc\":\"2.0\",\"id\":\xff7,\"result\":1}", ""},
		{"{\"jsonrpc\":\"2.0\",\"i\xff\":7,\"result\":1}", ""},
		{"{\"jsonrpc\":\"2.0\"\xff\"id\":7,\"result\":1}", ""},         // nothing read past the break
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\xff\"}", ""},    // a request
		{"{\"jsonrpc\":\"2.0\",\"id\":7,\"re\xffult\":1}", ""},         // nothing says response
		{"{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":\"\xff\"}", ""}, // not an id of ours
		{"{\"id\":7,\"id\":8,\"result\":\"\xff\"}", ""},                // two ids
		{"{\"result\":{\"id\":7,\"x\":\"\xff\"},\"id\":8}", "8"},       // nested ids do not count
		{"{\"result\":{\"id\":7,\"x\":\"\xff\"]}", ""},                 // a bracket of the wrong kind
		{"{\"result\":\"a\\\"\xff\",\"id\":9}", "9"},                   // an escaped quote
		{"[{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"\xff\"}]", "7"},  // a batch reply
		{"[{\"id\":3,\"result\":1},{\"id\":4,\"result\":\"\xff\"}]", "3"},
		{"[{\"id\":3,\"re\xffult\":1}, {\"id\":4,\"result\":1}]", "4"},
		{"[{\"id\":3,\"method\":\"m\"},{\"id\":4,\"result\":\"\xff\"}]", ""}, // a request in it
		{"[{\"id\":3,\"result\":[\xff]},{\"id\":4,\"result\":1}]", "3"},
		{"[{\"id\":\xff,\"result\":1},{\"id\":4,\"result\":1}]", ""}, // nothing read past the break
		{"[1,{\"id\":4,\"result\":\"\xff\"}]", ""},
		{"\xff{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":1}", ""},
	} {
		id, batch, ok := ResponseID([]byte(tc.in))
		if ok != (tc.id != "") || string(id) != tc.id || ok && batch != (tc.in[0] == '[') {
			t.Errorf("ResponseID(%q) = %q, %v; want %q", tc.in, id, ok, tc.id)
		}
	}
}

// ResponseID reads a peer's broken input: it must never panic, and an id it
// returns is a number that stands in data.
func FuzzResponseID(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"a\xffb\"}"))
	f.Add([]byte("[{\"id\":3,\"result\":[\xff]},{\"id\":4,\"result\":1}]"))
	f.Add([]byte("{\"result\":\"a\\\"\xff\",\"id\":9}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, _, ok := ResponseID(data)
		if ok && (len(id) == 0 || !bytes.Contains(data, id)) {
			t.Fatalf("ResponseID(%q) = %q", data, id)
		}
	})
}
