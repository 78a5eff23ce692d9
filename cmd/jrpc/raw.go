package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/peterh/liner"
	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

// rawLinger is raw's --linger: how long a script's session goes on
// printing what comes after its last answer.
var rawLinger time.Duration

func init() {
	cmd := &cobra.Command{
		Use:   "raw URL",
		Short: "Send each line as it is typed and print every message that comes, as it comes",
		Long: `A line mode for any transport, as websocat's: each line typed (or read from
standard input) is sent as one message exactly as it is, valid JSON-RPC or
not, and every message the server sends is printed on its own line as it
arrives, as it came: answers, notifications, the server's own requests (answer
them by typing the response). Over HTTP and NATS each line is one request and
its answer is printed when it comes. --framing chooses the framing of streams
(tcp, unix, stdio: line or lsp).

On a terminal, lines are edited and kept in a history across runs (as the
REPL's: raw_history beside the REPL's history file); Ctrl-D leaves.
When standard input is not a terminal, jrpc raw sends its lines, then waits
(up to --timeout) for the answers they call for, and exits: 0, or 3 when
the connection failed or answers are missing (--linger 2s goes on printing
what comes, such as a subscription's events, for 2s more).`,
		Example: `  jrpc raw ws://127.0.0.1:8081/
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}' | jrpc raw tcp://127.0.0.1:9090
  jrpc --framing lsp --exec 'jrpc serve --listen stdio: --framing lsp' raw`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, _, err := newTarget(args)
			if err != nil {
				return err
			}
			if global.streamable && t.isHTTP() {
				return usageErrorf("--streamable does not apply to raw (it sends each line as written, over plain HTTP)")
			}
			return runRaw(cmd.Context(), t, os.Stdin, isTerminal(os.Stdin.Fd()) && isTerminal(os.Stdout.Fd()))
		},
	}
	cmd.Flags().DurationVar(&rawLinger, "linger", 0, "when standard input is not a terminal: after the last answer, go on printing what comes (notifications, events) for this long")
	rootCmd.AddCommand(cmd)
}

// rawSession is a jrpc raw session: lines go out as they are; whatever
// comes back is printed as it comes.
type rawSession struct {
	t           *target
	rc          rawConn
	interactive bool // on a terminal: lines end in \r\n (liner may hold it in raw mode)
	// pushed: messages arrive on their own (streams), read by a goroutine;
	// else (HTTP, NATS) each send's answers are read after it.
	pushed bool

	mu      sync.Mutex
	owed    int           // answers the lines sent call for, not come yet
	ended   error         // why the stream ended; nil while it is open
	changed chan struct{} // closed and replaced when owed or ended change
	worst   int           // the highest exit code of the session's failures
}

func runRaw(ctx context.Context, t *target, in io.Reader, interactive bool) error {
	if interactive {
		ctx = context.WithoutCancel(ctx) // Ctrl-C clears the line; Ctrl-D leaves
	}
	dctx, cancel := callContext(ctx)
	rc, err := t.dialRaw(dctx, false)
	cancel()
	if err != nil {
		return err
	}
	s := &rawSession{t: t, rc: rc, interactive: interactive, changed: make(chan struct{}),
		pushed: !t.isHTTP() && (t.url == nil || t.url.Scheme != "nats")}
	defer rc.Close()
	if s.pushed {
		go s.read()
	}
	if interactive {
		return s.terminal(ctx)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if err := s.send(ctx, sc.Bytes()); err != nil {
			return err
		}
	}
	return s.drain(ctx)
}

// terminal reads lines with editing and history until Ctrl-D, or until
// the connection ends.
func (s *rawSession) terminal(ctx context.Context) error {
	ln := liner.NewLiner()
	defer ln.Close()
	ln.SetCtrlCAborts(true)
	hist := rawHistoryPath()
	if f, err := os.Open(hist); err == nil {
		ln.ReadHistory(f)
		f.Close()
	}
	defer func() {
		if hist == "" {
			return
		}
		os.MkdirAll(filepath.Dir(hist), 0o700)
		if f, err := os.OpenFile(hist, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
			ln.WriteHistory(f)
			f.Close()
		}
	}()
	fmt.Fprintf(os.Stderr, "connected to %s: each line is sent as it is, each message that comes is printed; Ctrl-D leaves\n", s.t)
	for {
		line, err := ln.Prompt("")
		if errors.Is(err, liner.ErrPromptAborted) {
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			return nil
		}
		if strings.TrimSpace(line) != "" {
			ln.AppendHistory(strings.TrimSpace(line))
		}
		if err := s.send(ctx, []byte(line)); err != nil {
			return err
		}
	}
}

// rawHistoryPath is where raw keeps its history: raw_history beside the
// REPL's history file ("" for none).
func rawHistoryPath() string {
	if p := historyPath(); p != "" {
		return filepath.Join(filepath.Dir(p), "raw_history")
	}
	return ""
}

// send sends one line as it is; over HTTP and NATS it prints the answers.
// Only a connection that has ended is an error; any other failure is
// reported and the session goes on.
func (s *rawSession) send(ctx context.Context, line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if err := s.endedErr(); err != nil {
		return err
	}
	if s.pushed { // HTTP and NATS: the answers come with the request's
		s.mu.Lock()
		s.owed += answersOwed(line)
		s.mu.Unlock()
	}
	cctx, cancel := callContext(ctx)
	defer cancel()
	if err := s.rc.Send(cctx, line); err != nil {
		if s.pushed {
			return s.t.transportErr(err) // the stream is broken
		}
		s.fail(s.t.transportErr(err))
		return nil
	}
	for !s.pushed {
		msg, err := s.rc.Recv(cctx)
		if err != nil {
			break // errNoMore: every answer of the request is printed
		}
		s.print(msg)
	}
	return nil
}

// read prints the messages of a stream as they come, until it ends.
func (s *rawSession) read() {
	for {
		msg, err := s.rc.Recv(context.Background())
		var fe *jsonrpc.FrameError
		switch {
		case errors.As(err, &fe) && !fe.Fatal:
			s.note(fmt.Sprintf("(a message the stream could not take: %s)", fe.Msg))
			continue
		case err != nil:
			s.mu.Lock()
			s.ended = err
			s.signal()
			s.mu.Unlock()
			if s.interactive {
				s.note("(the connection ended: " + oneLine(s.t.transportErr(err).Error()) + "; Enter or Ctrl-D leaves)")
			}
			return
		}
		s.print(msg)
	}
}

// print prints a message as it came, on a line of its own; an answer
// settles one owed.
func (s *rawSession) print(msg []byte) {
	msg = bytes.TrimSpace(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owed > 0 && isAnswer(msg) {
		s.owed--
		s.signal()
	}
	if s.interactive {
		// liner may hold the terminal in raw mode: no \n to \r\n there.
		msg = bytes.ReplaceAll(msg, []byte("\n"), []byte("\r\n"))
		os.Stdout.Write(append(append([]byte("\r"), msg...), '\r', '\n'))
		return
	}
	os.Stdout.Write(append(msg, '\n'))
}

// note prints a line of the session's own on stderr.
func (s *rawSession) note(text string) {
	if s.interactive {
		fmt.Fprint(os.Stderr, "\r"+text+"\r\n")
		return
	}
	fmt.Fprintln(os.Stderr, text)
}

// fail reports a failure that does not end the session.
func (s *rawSession) fail(err error) {
	var ee *exitError
	code := exitTransport
	if errors.As(err, &ee) {
		code = ee.code
	}
	s.mu.Lock()
	s.worst = max(s.worst, code)
	s.mu.Unlock()
	s.note("error: " + oneLine(err.Error()))
}

// signal wakes whoever waits on owed or ended (s.mu held).
func (s *rawSession) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// endedErr is the exit error of a stream that has ended, or nil.
func (s *rawSession) endedErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == nil {
		return nil
	}
	return s.t.transportErr(s.ended)
}

// drain waits, after the last line of a script, for the answers its lines
// call for (within --timeout), and returns the session's exit.
func (s *rawSession) drain(ctx context.Context) error {
	var timeout <-chan time.Time
	if global.timeout > 0 {
		timer := time.NewTimer(global.timeout)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		s.mu.Lock()
		owed, ended, changed, worst := s.owed, s.ended, s.changed, s.worst
		s.mu.Unlock()
		switch {
		case owed == 0:
			s.linger(ctx)
			if worst == exitOK {
				return nil
			}
			return &exitError{code: worst, err: errors.New("some lines of the session failed"), quiet: true}
		case ended != nil:
			return s.t.transportErr(ended)
		}
		select {
		case <-changed:
		case <-timeout:
			return transportError(fmt.Errorf("%d of the messages sent to %s got no answer within %v", owed, s.t, global.timeout), "a larger --timeout, or check that the server answers them")
		case <-ctx.Done():
			return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
		}
	}
}

// linger lets the reader print what comes for --linger more, or until
// the stream ends.
func (s *rawSession) linger(ctx context.Context) {
	if rawLinger <= 0 || !s.pushed {
		return
	}
	timer := time.NewTimer(rawLinger)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ended, changed := s.ended, s.changed
		s.mu.Unlock()
		if ended != nil {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// answersOwed is how many messages a line sent calls for from the server:
// none for a notification, a response or a batch of notifications, one for
// anything else (a call, a batch, and what the server must refuse: text
// that is not JSON, a request that is not valid).
func answersOwed(line []byte) int {
	var v any
	if json.Unmarshal(line, &v) != nil {
		return 1
	}
	switch x := v.(type) {
	case map[string]any:
		if quietMessage(x) {
			return 0
		}
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); !ok || !quietMessage(m) {
				return 1
			}
		}
		if len(x) > 0 {
			return 0
		}
	}
	return 1
}

// quietMessage reports whether a message gets no answer: a notification,
// or a response (to the server's own request).
func quietMessage(m map[string]any) bool {
	_, id := m["id"]
	_, method := m["method"]
	_, result := m["result"]
	_, failed := m["error"]
	return method && !id || !method && id && (result || failed)
}

// isAnswer reports whether a message from the server answers one of ours:
// a response or a batch of them, not a request or notification of its own.
func isAnswer(msg []byte) bool {
	if len(msg) > 0 && msg[0] == '[' {
		return true
	}
	var m struct{ Method *string }
	return json.Unmarshal(msg, &m) != nil || m.Method == nil
}
