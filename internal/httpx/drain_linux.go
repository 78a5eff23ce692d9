package httpx

import (
	"net"
	"os"
	"syscall"
)

// unlisten accepts every connection queued on a TCP listener and, in the
// next system call, ends its listening (shutdown on a listening socket:
// later connects are refused). It reports false for other listeners, or
// when the socket cannot be reached, and changes nothing then.
func unlisten(l net.Listener) ([]net.Conn, bool) {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return nil, false
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, false
	}
	var fds []int
	var shutErr error
	err = rc.Control(func(fd uintptr) {
		for {
			nfd, err := acceptNow(fd)
			if err == syscall.EINTR || err == syscall.ECONNABORTED {
				continue
			}
			if err != nil {
				break
			}
			fds = append(fds, nfd)
		}
		shutErr = unlistenNow(fd)
	})
	var conns []net.Conn
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "tcp")
		if c, err := net.FileConn(f); err == nil {
			conns = append(conns, c)
		}
		f.Close()
	}
	return conns, err == nil && shutErr == nil
}
