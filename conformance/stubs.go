package conformance

func (r *runner) specExampleChecks() []check { return nil }
func (r *runner) methodChecks() []check      { return nil }
func hostileChecks() []check                 { return nil }
