//go:build unix

package netx

import (
	"io/fs"
	"syscall"
)

// presetSocketMode sets the mode of a socket not yet bound. On Linux the
// file bind creates takes it (less the umask); elsewhere it may fail,
// harmlessly: the file is chmod-ed right after bind anyway.
func presetSocketMode(fd uintptr, mode fs.FileMode) {
	syscall.Fchmod(int(fd), uint32(mode.Perm()))
}
