//go:build !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package main

import "os"

// isTerminal reports whether fd is a character device (a close enough guess
// where termios is not available).
func isTerminal(fd uintptr) bool {
	fi, err := os.NewFile(fd, "").Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// terminalColumns returns the width of the terminal on fd, 0 if unknown.
func terminalColumns(fd uintptr) int { return 0 }
