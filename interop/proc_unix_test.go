//go:build unix

package interop

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts cmd in a process group of its own and makes its
// cancellation kill the whole group, so that a program it spawned is reaped
// with it.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
