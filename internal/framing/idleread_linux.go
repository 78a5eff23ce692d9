package framing

import (
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The shared waiter (Linux): an idle socket stream's read loop need not keep
// a goroutine parked in its read. WaitInput registers the socket with one
// epoll instance shared by the process (one-shot, for input or a hang-up)
// and lets its goroutine end; one goroutine waits on that epoll instance
// through the runtime's poller and, when a socket becomes readable, starts
// its stream's read loop again (Resumer.StartLoop). Close and InterruptRecv
// start it too, so that the loop meets the close or the interrupt as a
// parked read would. The waiter's goroutine ends when no socket is parked.

// parkState is a socket stream's state in the shared waiter, guarded by its lock.
type parkState struct {
	closing bool    // Close has begun: the stream parks no more
	fd      int32   // the socket, while parked
	resumer Resumer // starts the read loop again (non-nil: parked)
}

var waiter struct {
	once    sync.Once
	ep      *os.File // the epoll instance (nil: none, the streams wait as elsewhere)
	epfd    int      // its descriptor (ep.Fd would make it blocking)
	raw     syscall.RawConn
	mu      sync.Mutex
	parked  map[int32]*Stream // by socket
	running bool              // the waiting goroutine runs (or is about to)
}

// epollFile makes the shared epoll instance, once.
func epollFile() *os.File {
	waiter.once.Do(func() {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return
		}
		syscall.SetNonblock(fd, true) // so that the runtime's poller waits on it
		f := os.NewFile(uintptr(fd), "epoll")
		raw, err := f.SyscallConn()
		if err != nil {
			f.Close()
			return
		}
		waiter.ep, waiter.epfd, waiter.raw, waiter.parked = f, fd, raw, make(map[int32]*Stream)
	})
	return waiter.ep
}

// park hands the wait for input to the shared waiter, unless input (or the
// end of it, or an error) is there already, an interrupt is pending, or the
// stream is closing; it reports whether it did.
func (s *Stream) park(r Resumer) bool {
	if r == nil || epollFile() == nil {
		return false
	}
	fd, ready := int32(-1), true
	s.sock.raw.Control(func(f uintptr) {
		var b byte
		_, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, f, uintptr(unsafe.Pointer(&b)), 1, syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		fd, ready = int32(f), e != syscall.EAGAIN
	})
	if ready {
		return false
	}
	waiter.mu.Lock()
	defer waiter.mu.Unlock()
	sr := &s.sock.parked
	if sr.closing || s.interrupted.Load() {
		return false
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | syscall.EPOLLONESHOT, Fd: fd}
	err := syscall.EpollCtl(waiter.epfd, syscall.EPOLL_CTL_MOD, int(fd), &ev)
	if err == syscall.ENOENT {
		err = syscall.EpollCtl(waiter.epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	}
	if err != nil {
		return false
	}
	if old := waiter.parked[fd]; old != nil && old != s {
		// A stream whose socket was closed without Close: its loop meets the close.
		old.sock.parked.resumer.StartLoop()
	}
	sr.resumer, sr.fd = r, fd
	waiter.parked[fd] = s
	if !waiter.running {
		waiter.running = true
		waiter.ep.SetReadDeadline(time.Time{})
		go waitParked()
	}
	return true
}

// unpark starts the read loop of a stream whose wait the shared waiter holds
// (before Close, closing: the stream parks no more; before an interrupt).
func (s *Stream) unpark(closing bool) {
	if s.sock == nil {
		return
	}
	waiter.mu.Lock()
	defer waiter.mu.Unlock()
	sr := &s.sock.parked
	sr.closing = sr.closing || closing
	if sr.resumer != nil && waiter.parked[sr.fd] == s {
		delete(waiter.parked, sr.fd)
		sr.resumer.StartLoop() // a go statement: soon done
		sr.resumer = nil
		if len(waiter.parked) == 0 {
			waiter.ep.SetReadDeadline(time.Unix(1, 0)) // the waiter's goroutine ends
		}
	}
}

// waitParked is the shared waiter's goroutine: it starts the read loops of
// the sockets that become readable until none is parked.
func waitParked() {
	events := make([]syscall.EpollEvent, 128)
	for {
		n := 0
		err := waiter.raw.Read(func(fd uintptr) bool {
			for {
				var err error
				n, err = syscall.EpollWait(int(fd), events, 0)
				if err != syscall.EINTR {
					return n > 0
				}
			}
		})
		waiter.mu.Lock()
		for _, ev := range events[:max(n, 0)] {
			if s := waiter.parked[ev.Fd]; s != nil {
				delete(waiter.parked, ev.Fd)
				s.sock.parked.resumer.StartLoop() // a go statement: soon done
				s.sock.parked.resumer = nil
			}
		}
		stop := len(waiter.parked) == 0
		if stop {
			waiter.running = false
		} else if err != nil {
			waiter.ep.SetReadDeadline(time.Time{}) // woken to end, but a stream parked since
		}
		waiter.mu.Unlock()
		if stop {
			return
		}
	}
}
