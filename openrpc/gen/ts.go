package gen

func renderTS(m *model) []byte { return nil }
