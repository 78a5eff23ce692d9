//go:build !unix

package jsonrpc

import "io"

// socketReader reads a socket directly on unix systems only (idleread_unix.go).
type socketReader struct{}

func (s *stream) useSocketReader(io.ReadWriteCloser) {}

func (s *stream) readSocket() (int, error) { panic("unreachable") }
