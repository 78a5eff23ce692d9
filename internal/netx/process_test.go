package netx

import (
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The sniffer judges the first output however it is cut into reads: the
// other framing is an error as soon as it can be told, text that is not
// JSON-RPC is noted (and named at the end), JSON-RPC passes.
func TestSniffer(t *testing.T) {
	cases := []struct {
		name    string
		framing framing.Framing
		reads   []string
		observe string // in observe's error; "" for none
		atEnd   string // in atEnd's error; "" for none
	}{
		{"line sees headers", framing.Line, []string{"Cont", "ent-Length: 10\r\n"}, "writes Content-Length framed messages", ""},
		{"header sees JSON", framing.Header, []string{" ", "{\"jsonrpc\""}, "writes newline-delimited JSON", ""},
		{"line sees JSON", framing.Line, []string{"\ufeff[", "{}]\n"}, "", ""},
		{"header sees headers", framing.Header, []string{"content-type: x\r\n"}, "", ""},
		{"a banner", framing.Line, []string{"hel", "lo\nmore"}, "", `wrote "hello", which is not JSON`},
		{"a banner to LSP", framing.Header, []string{"ready\n"}, "", "not a Content-Length framed message"},
		{"nothing", framing.Line, []string{"", "  \n"}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := outputSniffer{command: "cmd", framing: c.framing, logger: quiet}
			var err error
			for _, r := range c.reads {
				if err = s.observe([]byte(r)); err != nil {
					break
				}
			}
			if c.observe == "" && err != nil || c.observe != "" && (err == nil || !strings.Contains(err.Error(), c.observe)) {
				t.Fatalf("observe: %v, want %q", err, c.observe)
			}
			if c.observe != "" {
				return
			}
			err = s.atEnd(false)
			if c.atEnd == "" && err != nil || c.atEnd != "" && (err == nil || !strings.Contains(err.Error(), c.atEnd)) {
				t.Fatalf("atEnd: %v, want %q", err, c.atEnd)
			}
			if began := s.atEnd(true); (began == nil) != (c.atEnd == "") {
				t.Fatalf("began: %v", began)
			}
		})
	}
}

// A long first line is cut short in errors, inside no character.
func TestSnifferCutsLongLines(t *testing.T) {
	s := outputSniffer{command: "cmd", framing: framing.Line, logger: quiet}
	s.observe([]byte(strings.Repeat("é", 100)))
	err := s.atEnd(false)
	if err == nil || !strings.Contains(err.Error(), strings.Repeat("é", 30)+"…") {
		t.Fatalf("atEnd: %v", err)
	}
}

// A command that exits with a failure is reported as such at the end of
// its output, with the *exec.ExitError inside.
func TestProcessExitStatus(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := StartCommand(sh, []string{"-c", "exit 3"}, CommandOptions{Stderr: io.Discard, Grace: 5 * time.Second, Framing: framing.Line, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Read(make([]byte, 64))
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(err.Error(), "ended") {
		t.Fatalf("Read at the end: %v, want the exit status 3", err)
	}
}

// A write that fails because the command has ended names what it wrote
// that was not JSON-RPC, even when the reader of its output has not read
// it yet: the connection keeps the first error it sees, which may be the
// write's.
func TestProcessWriteAfterExitNamesOutput(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := StartCommand(sh, []string{"-c", "echo hello; exec 0<&-"}, CommandOptions{Stderr: io.Discard, Grace: 5 * time.Second, Framing: framing.Line, Logger: quiet, Closed: io.ErrClosedPipe})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	<-p.exited
	read := make(chan error, 1)
	go func() {
		time.Sleep(50 * time.Millisecond) // after the write has failed
		_, err := io.Copy(io.Discard, p)
		read <- err
	}()
	_, err = p.Write([]byte("{}\n"))
	if !errors.Is(err, io.ErrClosedPipe) || !strings.Contains(err.Error(), `wrote "hello", which is not JSON`) {
		t.Fatalf("Write after the exit: %v, want io.ErrClosedPipe and the output named", err)
	}
	<-read
}

// Close kills a command that outlives its grace period once its input is
// closed, and returns only after it has been reaped.
func TestProcessCloseKillsAfterGrace(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	p, err := StartCommand(sh, []string{"-c", "trap '' TERM; exec sleep 60"}, CommandOptions{Stderr: io.Discard, Grace: 100 * time.Millisecond, Framing: framing.Line, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p.Close()
	select {
	case <-p.exited:
	default:
		t.Fatal("Close returned before the process was reaped")
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("Close took %v", d)
	}
}
