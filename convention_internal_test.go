package jsonrpc

import "testing"

// Each convention's cancel and progress methods, as the specifications
// name them; none for ConventionNone or a value past the known ones.
func TestConventionMethods(t *testing.T) {
	for _, c := range []struct {
		cv               Convention
		cancel, progress string
	}{
		{ConventionNone, "", ""},
		{ConventionLSP, "$/cancelRequest", "$/progress"},
		{ConventionMCP, "notifications/cancelled", "notifications/progress"},
		{ConventionMCP + 1, "", ""},
	} {
		if cancel, progress := c.cv.methods(); cancel != c.cancel || progress != c.progress {
			t.Errorf("convention %d: %q, %q; want %q, %q", c.cv, cancel, progress, c.cancel, c.progress)
		}
	}
}
