package mcp

import "testing"

// With tasks, the client's capabilities declare the Tasks extension beside
// what the caller declared (its other extensions kept); extensions that
// are not an object are refused.
func TestClientStateTasks(t *testing.T) {
	for _, tc := range []struct {
		caps any
		want string
	}{
		{nil, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
		{map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{"x": map[string]any{"v": 1}}},
			`{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{},"x":{"v":1}}}`},
		{map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{"kept": true}}},
			`{"extensions":{"io.modelcontextprotocol/tasks":{"kept":true}}}`},
	} {
		cs, err := NewClientState("c", "1", tc.caps, true)
		if err != nil || string(cs.Caps) != tc.want {
			t.Errorf("caps %v: %s %v, want %s", tc.caps, cs.Caps, err, tc.want)
		}
	}
	if _, err := NewClientState("c", "1", map[string]any{"extensions": []int{1}}, true); err == nil {
		t.Error("extensions that are no object: no error")
	}
	if cs, _ := NewClientState("c", "1", nil, false); string(cs.Caps) != `{}` {
		t.Errorf("without tasks: %s", cs.Caps)
	}
}
