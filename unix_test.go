//go:build unix

package jsonrpc

// Unix socket listeners never destroy a file (issue 12 point 1).

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func listenUnixURL(t *testing.T, url string, opts ...ListenOption) (*Server, *Listener) {
	t.Helper()
	srv := &Server{Handler: rulesMux(), Logger: quietLogger}
	l, err := srv.Listen(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(t, srv) })
	return srv, l
}

func shutdown(t *testing.T, srv *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// served checks that a server answers on the unix socket path.
func served(t *testing.T, path string) {
	t.Helper()
	p := dialPeer(t, "unix", path)
	p.write(okReq + "\n")
	if got := p.line(); got != okReply+"\n" {
		t.Fatalf("reply %q", got)
	}
}

// TestUnixListenLeavesOtherFilesAlone: a path that holds anything but a
// socket is refused with a clear error and left exactly as it was (before,
// Listen removed it).
func TestUnixListenLeavesOtherFilesAlone(t *testing.T) {
	dir := shortTempDir(t)
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	for path, kind := range map[string]string{file: "regular file", sub: "directory", fifo: "named pipe", link: "symbolic link", dangling: "symbolic link"} {
		before, _ := os.Lstat(path)
		srv := &Server{Handler: rulesMux(), Logger: quietLogger}
		_, err := srv.Listen("unix://" + path)
		if err == nil {
			shutdown(t, srv)
			t.Fatalf("%s: Listen succeeded", kind)
		}
		if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), "holds a "+kind+", not a socket") || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s: error %v", kind, err)
		}
		after, err := os.Lstat(path)
		if err != nil || !os.SameFile(before, after) || after.ModTime() != before.ModTime() || after.Mode() != before.Mode() {
			t.Fatalf("%s: the path was touched (%v)", kind, err)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "precious" {
		t.Fatalf("file now holds %q", b)
	}
}

// TestUnixListenRefusesLiveSocket: a second server on the path of a socket
// that accepts connections gets "address in use" and changes nothing; the
// first stays reachable, also after the second gave up (before, the second
// took the path over and removed it on exit).
func TestUnixListenRefusesLiveSocket(t *testing.T) {
	path := filepath.Join(shortTempDir(t), "s")
	listenUnixURL(t, "unix://"+path)
	srv2 := &Server{Handler: rulesMux(), Logger: quietLogger}
	_, err := srv2.Listen("unix://" + path)
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "a server accepts connections there") {
		t.Fatalf("second Listen: %v", err)
	}
	shutdown(t, srv2)
	served(t, path)
	// The same from another process's point of view: a plain net listener.
	other := filepath.Join(filepath.Dir(path), "other")
	nl, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	if _, err := srv2.Listen("unix://" + other); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Listen on a foreign live socket: %v", err)
	}
}

// TestUnixListenReplacesStaleSocket: a socket nobody listens on (left by a
// server that died) is replaced.
func TestUnixListenReplacesStaleSocket(t *testing.T) {
	path := filepath.Join(shortTempDir(t), "s")
	nl, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	nl.(*net.UnixListener).SetUnlinkOnClose(false)
	nl.Close()
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != fs.ModeSocket {
		t.Fatalf("no stale socket: %v", err)
	}
	listenUnixURL(t, "unix://"+path)
	served(t, path)
}

// TestUnixShutdownRemovesOnlyItsSocket: on Shutdown a server removes its
// socket file, but not a socket another server put at the path since.
func TestUnixShutdownRemovesOnlyItsSocket(t *testing.T) {
	path := filepath.Join(shortTempDir(t), "s")
	srv, l := listenUnixURL(t, "unix://"+path)
	served(t, path)
	shutdown(t, srv)
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the socket file is still there after Shutdown: %v", err)
	}

	// Another server's socket replaces ours while we run.
	srv, _ = listenUnixURL(t, "unix://"+path)
	os.Remove(path)
	nl, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer nl.Close()
	theirs, _ := os.Lstat(path)
	shutdown(t, srv)
	if now, err := os.Lstat(path); err != nil || !os.SameFile(now, theirs) {
		t.Fatalf("Shutdown removed the other server's socket: %v", err)
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("the other server is unreachable: %v", err)
	}
	c.Close()
}

// TestUnixSocketMode: the socket file is 0600 by default and takes the mode
// of ListenSocketMode exactly, whatever the umask.
func TestUnixSocketMode(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := shortTempDir(t)
	for _, tc := range []struct {
		opts []ListenOption
		want fs.FileMode
	}{
		{nil, 0o600},
		{[]ListenOption{ListenSocketMode(0o660)}, 0o660},
		{[]ListenOption{ListenSocketMode(0o666)}, 0o666},
	} {
		path := filepath.Join(dir, "s"+strconv.Itoa(int(tc.want)))
		listenUnixURL(t, "unix://"+path, tc.opts...)
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode().Perm() != tc.want || fi.Mode().Type() != fs.ModeSocket {
			t.Fatalf("mode %v (%v), want %v", fi.Mode(), err, tc.want)
		}
		served(t, path)
	}
}

// TestUnixAbstractSocket: unix://@name listens and dials an abstract socket
// (Linux): no file anywhere.
func TestUnixAbstractSocket(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("abstract sockets are Linux only")
	}
	name := "@jsonrpc-test-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	srv, l := listenUnixURL(t, "unix://"+name)
	if l.URL != "unix://"+name {
		t.Fatalf("URL %q", l.URL)
	}
	for _, url := range []string{"unix://" + name, "unix:" + name} {
		c, err := Dial(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := c.Call(context.Background(), "echo", []string{"ok"}, &got); err != nil || len(got) != 1 || got[0] != "ok" {
			t.Fatalf("%s: call: %v %v", url, got, err)
		}
		c.Close()
	}
	// A live abstract name is refused like a live socket file.
	if _, err := (&Server{Handler: rulesMux()}).Listen("unix://" + name); !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("second Listen: %v", err)
	}
	shutdown(t, srv)
}

// A Shutdown right after Listen returns stops the listener it started: the
// unix socket's file is gone when Shutdown returns, and an HTTP listener's
// port no longer answers.
func TestShutdownRightAfterListen(t *testing.T) {
	dir := shortTempDir(t)
	for i := range 20 {
		srv := &Server{Handler: rulesMux(), Logger: quietLogger}
		path := filepath.Join(dir, "s"+strconv.Itoa(i))
		if _, err := srv.Listen("unix://" + path); err != nil {
			t.Fatal(err)
		}
		h, err := srv.Listen("http://127.0.0.1:0/")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("round %d: the socket file is still there after Shutdown (%v)", i, err)
		}
		select {
		case <-h.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the HTTP listener did not stop", i)
		}
	}
}
