//go:build linux && !386

package httpx

import "syscall"

// acceptNow and unlistenNow are accept4 and shutdown(SHUT_RD) as raw system
// calls: the goroutine keeps its P between the last accept and the end of
// listening, so the runtime cannot park it there (a connection completed
// in that gap would be reset, after its client had sent a request).
func acceptNow(fd uintptr) (int, error) {
	nfd, _, e := syscall.RawSyscall6(syscall.SYS_ACCEPT4, fd, 0, 0, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(nfd), nil
}

func unlistenNow(fd uintptr) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_SHUTDOWN, fd, syscall.SHUT_RD, 0); e != 0 {
		return e
	}
	return nil
}
