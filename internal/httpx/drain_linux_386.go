//go:build linux && 386

package httpx

import "syscall"

// acceptNow and unlistenNow: on 386 both go through socketcall, so they
// are the syscall package's (see drain_linux_raw.go).
func acceptNow(fd uintptr) (int, error) {
	nfd, _, err := syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
	return nfd, err
}

func unlistenNow(fd uintptr) error { return syscall.Shutdown(int(fd), syscall.SHUT_RD) }
