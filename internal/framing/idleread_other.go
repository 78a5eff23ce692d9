//go:build !unix

package framing

import "io"

// socketReader reads a socket directly on unix systems only (idleread_unix.go).
type socketReader struct{}

func (s *Stream) useSocketReader(io.ReadWriteCloser) {}

func (w *writer) tryWrite([]byte) int { return 0 }

func (s *Stream) readSocket() (int, error) { panic("unreachable") }
