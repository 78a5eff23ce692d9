package httpx

import (
	"net"
	"os"
	"syscall"
	"time"
)

// drainHandshake is how long a handshake the listener answered before it
// stopped answering new ones has to complete: a round trip to a proxy
// beside the server.
const drainHandshake = 20 * time.Millisecond

// dropSYN is a socket filter (classic BPF, run on the TCP header) that
// drops a segment opening a connection (SYN without ACK) and lets every
// other through: the listener answers no new connect, and the handshakes
// it has answered still complete.
var dropSYN = []syscall.SockFilter{
	{Code: syscall.BPF_LD | syscall.BPF_B | syscall.BPF_ABS, K: 13},    // the flags
	{Code: syscall.BPF_ALU | syscall.BPF_AND | syscall.BPF_K, K: 0x12}, // SYN|ACK
	{Code: syscall.BPF_JMP | syscall.BPF_JEQ | syscall.BPF_K, K: 0x02, Jt: 0, Jf: 1},
	{Code: syscall.BPF_RET | syscall.BPF_K, K: 0},          // drop
	{Code: syscall.BPF_RET | syscall.BPF_K, K: 0xffffffff}, // keep
}

// unlisten stops a TCP listener without resetting a connection its kernel
// completed: it stops answering connects (dropSYN: the client sends its
// SYN again a second later and is refused then), waits drainHandshake for
// the handshakes under way, accepts every connection queued and, in the
// next system call, ends the listening (shutdown on a listening socket).
// It reports false for other listeners, or when the socket cannot be
// reached, and changes nothing then.
func unlisten(l net.Listener) ([]net.Conn, bool) {
	tl, ok := l.(*net.TCPListener)
	if !ok {
		return nil, false
	}
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, false
	}
	var filterErr error
	if err := rc.Control(func(fd uintptr) { filterErr = attachFilter(fd, dropSYN) }); err != nil {
		return nil, false
	}
	if filterErr == nil { // else the gap between the last accept and the shutdown stays
		time.Sleep(drainHandshake)
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

// attachFilter sets prog as the socket's filter (SO_ATTACH_FILTER).
func attachFilter(fd uintptr, prog []syscall.SockFilter) error {
	//lint:ignore SA1019 x/net/bpf would only assemble the same five instructions; the setsockopt is this one
	return syscall.AttachLsf(int(fd), prog)
}
