package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// DefaultGracePeriod is how long closing a DialCommand connection waits
// for the command to exit after its standard input closed, before killing it.
const DefaultGracePeriod = 5 * time.Second

// WithStderr sends the standard error of a DialCommand subprocess to w
// (default os.Stderr; io.Discard drops it).
func WithStderr(w io.Writer) DialOption { return func(c *dialConfig) { c.stderr = w } }

// WithGracePeriod sets how long Close waits for a DialCommand subprocess to
// exit once its standard input is closed, before killing it (default
// DefaultGracePeriod).
func WithGracePeriod(d time.Duration) DialOption { return func(c *dialConfig) { c.grace = d } }

// DialCommand starts the command name with args and returns a Conn that
// talks JSON-RPC over its standard input and output, as LSP and MCP clients
// do. Options: WithFraming (default FramingLine; FramingHeader for LSP),
// WithHandler (serves the command's calls to us), WithMaxMessageSize,
// WithStderr (where the command's standard error goes, default os.Stderr),
// WithGracePeriod.
//
// ctx bounds the start only: the command runs until the Conn closes. Close
// (or the end of the connection) closes the command's standard input,
// waits up to the grace period for it to exit, kills it if it has not, and
// reaps it. When the command exits by itself the connection ends; if it
// failed, Conn.Err says how (an *exec.ExitError inside).
//
// The command's first output is checked against the framing: messages
// framed the other way end the connection at once (a call would otherwise
// wait for an answer that can never be read), saying which WithFraming
// fits; text that is not JSON-RPC (a banner) is logged (WithLogger) and,
// if the command then ends, named in the error ("wrote "hello", which is
// not JSON").
func DialCommand(ctx context.Context, name string, args []string, opts ...DialOption) (*Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg := newDialConfig(opts)
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
	cmd.Stdout = childOut
	cmd.Stderr = cfg.stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	grace := cfg.grace
	if grace <= 0 {
		grace = DefaultGracePeriod
	}
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
	framing := cfg.framing
	if framing == FramingAuto {
		framing = FramingLine
	}
	p := &process{cmd: cmd, stdin: stdin, stdout: stdout, grace: grace, exited: make(chan struct{}),
		sniff: outputSniffer{command: name, framing: framing, logger: cfg.logger}}
	go p.wait()
	return cfg.newConn(NewStream(p, StreamOptions{Framing: framing, MaxMessageSize: cfg.maxMessageSize})), nil
}

// process is a subprocess as an io.ReadWriteCloser: reads from its
// standard output, writes to its standard input.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	grace  time.Duration

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // why it exited, set before exited closes
	once    sync.Once
	sniff   outputSniffer
}

// wait reaps the process as soon as it exits, so it never lingers as a zombie.
func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

func (p *process) Read(b []byte) (int, error) {
	n, err := p.stdout.Read(b)
	if serr := p.sniff.observe(b[:n]); serr != nil {
		return 0, serr
	}
	if err == io.EOF {
		// The command closed its output: it has exited or is about to.
		// Report a failed exit rather than a plain end of input, and
		// output that was not JSON-RPC.
		notRPC := p.sniff.atEnd()
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

// Write writes to the command's input. When the command has gone, the
// error also says what it wrote, if that was not JSON-RPC.
func (p *process) Write(b []byte) (int, error) {
	n, err := p.stdin.Write(b)
	if err != nil {
		select {
		case <-p.exited:
		case <-time.After(time.Second):
		}
		if notRPC := p.sniff.began(); notRPC != nil {
			return n, errors.Join(err, notRPC)
		}
	}
	return n, err
}

// Close closes the command's standard input, gives it the grace period to
// finish, kills it if needed and waits until it has been reaped.
func (p *process) Close() error {
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
