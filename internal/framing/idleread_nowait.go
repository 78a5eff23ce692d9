//go:build !linux

package framing

// Only Linux has the shared waiter (idleread_linux.go): elsewhere an idle
// stream's read loop waits in its read.

//lint:ignore U1000 socketReader's (unix only: idleread_unix.go)
type parkState struct{}

func (s *Stream) park(Resumer) bool { return false }

func (s *Stream) unpark(bool) {}
