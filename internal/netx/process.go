package netx

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// CommandOptions says how StartCommand runs a command.
type CommandOptions struct {
	Stderr  io.Writer       // where its standard error goes (nil: os.Stderr)
	Grace   time.Duration   // how long Close waits for it to exit before killing it (> 0)
	Framing framing.Framing // how its output should be framed: framing.Line or framing.Header
	Logger  *slog.Logger    // where output that is not JSON-RPC is reported (nil: slog.Default)
	Closed  error           // what a write the command did not take matches
}

// Process is a running command as an io.ReadWriteCloser: reads from its
// standard output, writes to its standard input.
type Process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	grace  time.Duration
	closed error

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // why it exited, set before exited closes
	once    sync.Once
	sniff   outputSniffer
	outEnd  chan struct{} // closed once Read has reached the end of the output
	endOnce sync.Once
}

// StartCommand starts the command name with args. The process is reaped as soon
// as it exits, so it never lingers as a zombie.
func StartCommand(name string, args []string, o CommandOptions) (*Process, error) {
	cmd := exec.Command(name, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipe for stdout (not cmd.StdoutPipe): cmd.Wait would close it
	// at exit, racing with the reads of the last responses.
	stdout, childOut, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = childOut, cmp.Or[io.Writer](o.Stderr, os.Stderr)
	// After exit, stop copying stderr (when it is not a file) even if a
	// grandchild still holds it open.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		stdin.Close()
		stdout.Close()
		childOut.Close()
		return nil, err
	}
	childOut.Close() // the child has its copy; ours would hide its EOF
	p := &Process{cmd: cmd, stdin: stdin, stdout: stdout, grace: o.Grace, closed: o.Closed, exited: make(chan struct{}),
		sniff: outputSniffer{command: name, framing: o.Framing, logger: o.Logger}, outEnd: make(chan struct{})}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *Process) Read(b []byte) (int, error) {
	n, err := p.stdout.Read(b)
	if serr := p.sniff.observe(b[:n]); serr != nil {
		return 0, serr
	}
	if err == io.EOF {
		// The command closed its output: it has exited or is about to.
		// Report a failed exit rather than a plain end of input, and
		// output that was not JSON-RPC.
		p.endOnce.Do(func() { close(p.outEnd) })
		notRPC := p.sniff.atEnd(false)
		select {
		case <-p.exited:
			if p.waitErr != nil {
				return n, errors.Join(fmt.Errorf("jsonrpc: command %s ended: %w", p.cmd.Path, p.waitErr), notRPC)
			}
		case <-time.After(time.Second):
		}
		if notRPC != nil {
			return n, notRPC
		}
	}
	return n, err
}

// Write writes to the command's input. When the command has ended or
// closed its input, the error matches CommandOptions.Closed and wraps the
// write's (syscall.EPIPE, or os.ErrClosed once it was reaped), why it
// exited and what it wrote if that was not JSON-RPC (once its reader has
// read the output to its end: a write may fail first).
func (p *Process) Write(b []byte) (int, error) {
	n, err := p.stdin.Write(b)
	if err == nil {
		return n, nil
	}
	gone, exitErr := "closed its input", error(nil)
	wait := time.NewTimer(time.Second)
	defer wait.Stop()
	select {
	case <-p.exited:
		gone, exitErr = "ended", p.waitErr
		select {
		case <-p.outEnd:
		case <-wait.C:
		}
	case <-wait.C:
	}
	return n, errors.Join(fmt.Errorf("%w: command %s %s: %w", p.closed, p.cmd.Path, gone, err), exitErr, p.sniff.atEnd(true))
}

// Close closes the command's standard input, gives it the grace period to
// finish, kills it if needed and waits until it has been reaped.
func (p *Process) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		t := time.NewTimer(p.grace)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			p.cmd.Process.Kill()
			<-p.exited
		}
		p.stdout.Close()
	})
	return nil
}
