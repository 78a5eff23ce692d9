//go:build unix

package framing

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// A stream on a TCP or unix socket reads through the socket's RawConn, so
// that it can wait for input holding no read buffer: a read interrupted
// with nothing buffered (the idle refresh of reading.go) lets the buffer
// go, and the idle connection keeps none until its next message. A busy
// connection keeps its buffer, and reads with the same system calls as
// net.Conn.Read: try a read, wait for the socket when it would block, and
// read again.

// socketReader is the state of reading a socket directly, and of writing it
// (tryWrite).
type socketReader struct {
	raw    syscall.RawConn
	read   func(fd uintptr) bool // s.readFD, bound once (no allocation per read)
	n      int
	err    error
	waited bool                  // this read has waited for the socket
	woken  bool                  // input arrived and there was no buffer to read it into
	first  [1]byte               // a byte read with no buffer (woken, n == 1)
	write  func(fd uintptr) bool // writeFD, bound once; its state (one writer at a time: see writer.writing):
	wp     []byte
	wn     int
	//lint:ignore U1000 the shared waiter's, on Linux only (idleread_linux.go)
	parked parkState
}

// useSocketReader sets s up to read rwc directly when it is a TCP or unix
// socket (not a wrapper of one, such as a TLS connection).
func (s *Stream) useSocketReader(rwc io.ReadWriteCloser) {
	var sc syscall.Conn
	switch c := rwc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	s.sock = &socketReader{raw: raw}
	s.sock.read, s.sock.write = s.readFD, s.sock.writeFD
}

// tryWrite writes what of p the socket takes now, without waiting and
// without a deadline, and returns how much that was: a socket with room
// (nearly always) costs no deadline to set. An error is left to write,
// whose write meets it again and reports it as net.Conn.Write does.
func (w *writer) tryWrite(p []byte) int {
	sw := w.sock
	if sw == nil {
		return 0
	}
	sw.wp, sw.wn = p, 0
	sw.raw.Write(sw.write) // an error (closed, a past deadline) leaves wn at 0
	sw.wp = nil
	return sw.wn
}

// writeFD is the RawConn write function: one write(2), never waiting.
func (sr *socketReader) writeFD(fd uintptr) bool {
	for {
		n, err := syscall.Write(int(fd), sr.wp)
		if err != syscall.EINTR {
			sr.wn = max(n, 0)
			return true
		}
	}
}

// readSocket reads into s.buf[s.w:] as rwc.Read would.
func (s *Stream) readSocket() (int, error) {
	sr := s.sock
	for {
		sr.n, sr.err, sr.waited, sr.woken = 0, nil, false, false
		if err := sr.raw.Read(sr.read); err != nil {
			return 0, asReadError(s.rwc.(net.Conn), err) // closed, or the read deadline passed (InterruptRecv)
		}
		if !sr.woken {
			break
		}
		// Input arrived with no buffer to read it into: make one now
		// (not in readFD, whose frames sit deeper in the stack).
		s.buf, s.cur = s.newBuf(s.bufferSize())
		if sr.n == 1 {
			s.buf[0] = sr.first[0]
			return 1, nil
		}
	}
	if sr.err != nil {
		return 0, readError(s.rwc.(net.Conn), sr.err)
	}
	if sr.n == 0 {
		return 0, io.EOF
	}
	return sr.n, nil
}

// readFD is the RawConn read function; it reports false to wait for the
// socket. With no buffer, it reads one byte before it has waited (a
// goroutine that starts reading allocates nothing until input comes: its
// stack stays at its small start, which it would keep for good if an
// allocation grew it) and none after (woken: readSocket makes a buffer).
func (s *Stream) readFD(fd uintptr) bool {
	sr := s.sock
	p := sr.first[:]
	if s.buf != nil {
		p = s.buf[s.w:]
	} else if sr.waited {
		sr.woken = true
		return true
	}
	n, err := sysRead(fd, p)
	if err == syscall.EAGAIN {
		sr.waited = true
		return false
	}
	sr.n, sr.err, sr.woken = max(n, 0), err, s.buf == nil && n == 1
	return true
}

// sysRead is read(2), retried when a signal interrupts it.
func sysRead(fd uintptr, p []byte) (int, error) {
	for {
		n, err := syscall.Read(int(fd), p)
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// readError is err as net.Conn.Read reports it.
func readError(nc net.Conn, err error) error {
	return &net.OpError{Op: "read", Net: nc.LocalAddr().Network(), Source: nc.LocalAddr(), Addr: nc.RemoteAddr(), Err: os.NewSyscallError("read", err)}
}

// asReadError reports an error of RawConn.Read (Op "raw-read", no
// addresses) as net.Conn.Read would.
func asReadError(nc net.Conn, err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "raw-read" {
		return &net.OpError{Op: "read", Net: oe.Net, Source: nc.LocalAddr(), Addr: nc.RemoteAddr(), Err: oe.Err}
	}
	return err
}
