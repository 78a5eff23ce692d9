package streamable

import "testing"

func TestOutline(t *testing.T) {
	for _, c := range []struct {
		msg                string
		calls, responses   int
		initID, initResult string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 1, 0, "1", ""},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize"}`, 1, 0, `"a"`, ""},
		{`{"jsonrpc":"2.0","method":"initialize"}`, 0, 0, "", ""}, // a notification
		{`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, 1, 0, "", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":7,"result":null}]`, 1, 1, "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`, 0, 1, "", "2025-11-25"},
		{`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025 11 25"}}`, 0, 1, "", ""}, // not a header value
		{`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}`, 0, 1, "", ""},
		{`[]`, 0, 0, "", ""},
		{`{"jsonrpc":`, 0, 0, "", ""},
	} {
		out := outline([]byte(c.msg))
		if out.init != c.initID || out.calls != c.calls || out.responses != c.responses {
			t.Errorf("outline(%s) = %d calls, %d responses, init %q; want %d, %d, %q", c.msg, out.calls, out.responses, out.init, c.calls, c.responses, c.initID)
		}
		if v := initializedVersion([]byte(c.msg), "1"); v != c.initResult {
			t.Errorf("initializedVersion(%s, 1) = %q, want %q", c.msg, v, c.initResult)
		}
	}
	if v := initializedVersion([]byte(`{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25"}}`), "1"); v != "" {
		t.Errorf("the answer to another id gave %q", v)
	}
}

// FuzzMessages: any bytes are counted and inspected without a panic, and
// a message counts no more calls and responses than its elements.
func FuzzMessages(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	f.Add(`[{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"x"}},{"jsonrpc":"2.0","id":2,"method":"m"}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, msg string) {
		out := outline([]byte(msg))
		if out.calls < 0 || out.responses < 0 || out.calls+out.responses > len(msg)/10+1 {
			t.Fatalf("outline(%q) = %d calls, %d responses", msg, out.calls, out.responses)
		}
		_ = initializedVersion([]byte(msg), "1")
	})
}
