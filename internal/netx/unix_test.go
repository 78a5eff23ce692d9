//go:build unix

package netx

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// shortTempDir is a temporary directory with a short path (a unix socket
// path is limited to about 100 bytes).
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "netx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestUnixSocketModeBeforeBind: on Linux the socket file is created with
// its final mode (never wider, not even between bind and chmod).
func TestUnixSocketModeBeforeBind(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("elsewhere the mode is set right after bind")
	}
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	path := filepath.Join(shortTempDir(t), "s")
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { presetSocketMode(fd, 0o600) })
	}}
	nl, err := lc.Listen(context.Background(), "unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created with mode %v (%v)", fi.Mode(), err)
	}
}

// ListenUnix gives the file the mode asked for, refuses a path that holds
// a regular file (leaving it), and its Close removes its own file but not
// one that replaced it.
func TestListenUnixFiles(t *testing.T) {
	dir := shortTempDir(t)
	regular := filepath.Join(dir, "f")
	if err := os.WriteFile(regular, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ListenUnix(regular, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("ListenUnix on a regular file: %v, want fs.ErrExist", err)
	}
	if b, err := os.ReadFile(regular); err != nil || string(b) != "keep" {
		t.Fatalf("the regular file became %q (%v)", b, err)
	}

	path := filepath.Join(dir, "s")
	l, err := ListenUnix(path, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Fatalf("socket file mode %v (%v), want 0640", fi.Mode(), err)
	}
	if _, err := ListenUnix(path, 0o600); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("ListenUnix on a live socket: %v, want EADDRINUSE", err)
	}
	// Another file takes the path: Close leaves it.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("other"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("Close removed a file that was not its socket: %v", err)
	}
	os.Remove(path)

	l, err = ListenUnix(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Close left its socket file: %v", err)
	}
}
