package gen

type subscription struct{}

func (b *builder) subscriptions(m *model) []*subscription { return nil }

func (w *goWriter) subscriptions() {}
