package netx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// ListenUnix listens on a unix socket without ever destroying a file: a
// path that holds anything but a socket is refused and left alone, a
// socket that accepts connections is refused (address in use), and only a
// stale socket (connecting is refused) is removed. The socket file gets
// mode (the umask does not apply), with no moment when its permissions are
// wider. Closing the listener removes the socket file only if it is still
// the one created here (same device and inode): a server that replaced it
// keeps its own.
// A path starting with "@" names an abstract socket (Linux only: no file,
// gone with the last descriptor).
func ListenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	if len(path) > 0 && path[0] == '@' {
		if runtime.GOOS != "linux" && runtime.GOOS != "android" {
			return nil, fmt.Errorf("jsonrpc: abstract unix socket %s: only Linux has them", path)
		}
		return net.Listen("unix", path)
	}
	if err := clearStaleSocket(path); err != nil {
		return nil, err
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		// Before bind: where the system allows it, the socket's own mode
		// is the file's (less the umask), so it is never created wider.
		c.Control(func(fd uintptr) { presetSocketMode(fd, mode) })
		return nil
	}}
	nl, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, err
	}
	ul := nl.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // by name: it could remove another server's socket
	fi, err := os.Lstat(path)
	if err == nil {
		err = os.Chmod(path, mode)
	}
	if err != nil {
		ul.Close()
		return nil, fmt.Errorf("jsonrpc: unix socket %s: %w", path, err)
	}
	return &unixListener{UnixListener: ul, path: path, file: fi}, nil
}

// clearStaleSocket makes way for a new socket at path, or says why not.
func clearStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jsonrpc: unix socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("jsonrpc: unix socket %s: the path holds a %s, not a socket; it was left untouched: %w", path, fileKind(fi.Mode()), fs.ErrExist)
	}
	nc, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		nc.Close()
		return fmt.Errorf("jsonrpc: unix socket %s: a server accepts connections there: %w", path, syscall.EADDRINUSE)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("jsonrpc: unix socket %s: cannot tell whether a server listens there, so it was left untouched: %w", path, err)
	}
	// Nobody listens: a stale socket from an earlier run. Remove it only
	// if it is still the file just checked.
	if again, err := os.Lstat(path); err == nil && os.SameFile(fi, again) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("jsonrpc: unix socket %s: removing the stale socket: %w", path, err)
		}
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "regular file"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSymlink:
		return "symbolic link"
	case fs.ModeNamedPipe:
		return "named pipe"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "device"
	}
	return "file"
}

// unixListener removes its socket file on Close, if the file is still its own.
type unixListener struct {
	*net.UnixListener
	path string
	file fs.FileInfo // the socket file as created
	once sync.Once
	err  error
}

func (l *unixListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.file) {
			os.Remove(l.path)
		}
	})
	return l.err
}
