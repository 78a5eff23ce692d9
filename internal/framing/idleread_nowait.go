//go:build unix && !linux

package framing

// Only Linux has the shared waiter (idleread_linux.go): elsewhere an idle
// stream's read loop waits in its read.

type parkState struct{}

func (s *Stream) park(Resumer) bool { return false }

func (s *Stream) unpark(bool) {}
