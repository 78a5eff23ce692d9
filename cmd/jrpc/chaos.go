package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/seedhq/jsonrpc/auth"
	"github.com/seedhq/jsonrpc/chaos"
	"github.com/spf13/cobra"
)

type chaosFlags struct {
	listen string
	faults []string
	plan   string
	seed   uint64
	json   bool
}

func init() {
	var f chaosFlags
	cmd := &cobra.Command{
		Use:   "chaos --listen URL TARGET --fault SPEC ...",
		Short: "A fault proxy: forward JSON-RPC messages to a target and inject faults into the ones chosen",
		Long: `Listen on --listen and forward every message to TARGET (with --exec, between
stdin/stdout and a subprocess), injecting faults chosen by method, direction,
message number or at random with a seed. Transports: tcp://, unix:// (newline
or Content-Length framing, detected), ws://, http:// (plain HTTP and Streamable
HTTP: JSON answers, event-stream answers and the GET stream, an event a
message); --exec for stdio. tls://, https:// and wss:// targets are dialled
with --cacert, --cert/--key and --insecure (default: the system's roots);
the proxy listens in the clear (tcp://, http://, ws://).

SPEC is a comma-separated list of a match and one action; a match left out
matches every message:
  method=NAME       a request's method (a response: the method it answers)
  dir=in|out        in: towards the target; out: towards the client
  nth=N             the N-th message matching the rest, 1-based, over the proxy
  p=P               with probability P (seeded by --seed)
and one of:
  delay=DURATION    delay=MIN..MAX (uniform), delay=exp:MEAN (exponential)
  error=CODE        a JSON-RPC error instead of the answer, with the call's id
  drop  dup  reorder (a batch, reversed)  corrupt (one byte made 0xFF)
  cut               the connection closed instead of the message
  cut-after-bytes=N the connection cut after N more bytes in that direction
  sse-cut-after=N   an event-stream answer cut after N events (Streamable HTTP)
  half-open         the proxy stops reading and writing, the sockets stay open
  bandwidth=BYTES   the message written at BYTES a second
  slow-read         the sender read slowly from then on (64 bytes every 50 ms)

Each fault injected is one line on stderr naming the action, the direction,
the method and the message number (--json: one JSON object a line). --plan
reads specs from a file, one a line (# comments).`,
		Example: `  jrpc chaos --listen tcp://127.0.0.1:9091 tcp://127.0.0.1:9090 --fault method=subtract,dir=in,nth=3,drop
  jrpc chaos --listen http://127.0.0.1:8081/mcp http://127.0.0.1:8080/mcp --fault method=tools/call,sse-cut-after=1
  jrpc chaos --exec 'jrpc serve --listen stdio:' --fault p=0.1,error=-32000 --seed 7 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runChaos(cmd.Context(), args, &f) },
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.listen, "listen", "l", "", "accept connections on `URL` (tcp://, unix://, ws://, http://)")
	fl.StringArrayVar(&f.faults, "fault", nil, "a fault `SPEC` (repeatable)")
	fl.StringVar(&f.plan, "plan", "", "read fault specs from `FILE`, one a line")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of p=, delay distributions and corrupt's positions")
	fl.BoolVar(&f.json, "json", false, "report each injected fault as one JSON object a line")
	rootCmd.AddCommand(cmd)
}

func runChaos(ctx context.Context, args []string, f *chaosFlags) error {
	faults, err := chaosFaults(f)
	if err != nil {
		return err
	}
	opts := chaos.Options{Faults: faults, Seed: f.seed, Log: os.Stderr, JSON: f.json}
	if opts.TargetTLS, err = chaosTargetTLS(); err != nil {
		return err
	}
	if global.exec != "" {
		if len(args) > 0 || f.listen != "" {
			return usageErrorf("chaos --exec talks stdio: no TARGET, no --listen")
		}
		return chaosExec(ctx, global.exec, opts)
	}
	if len(args) != 1 || f.listen == "" {
		return &exitError{code: exitUsage, err: errors.New("chaos needs --listen URL and a TARGET URL"),
			hint: "jrpc chaos --listen tcp://127.0.0.1:9091 tcp://127.0.0.1:9090 --fault dir=in,nth=3,drop"}
	}
	p, err := chaos.Start(f.listen, args[0], opts)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	defer p.Close()
	fmt.Fprintf(os.Stderr, "chaos: listening on %s for %s (%d faults)\n", p.URL, args[0], len(faults))
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// chaosTargetTLS is the TLS of the target from the client security flags
// (nil: the system's roots).
func chaosTargetTLS() (*tls.Config, error) {
	cs := clientSecurity
	if cs.cacert == "" && cs.cert == "" && cs.key == "" && !cs.insecure {
		return nil, nil
	}
	cfg, err := auth.ClientTLS(cs.cacert, cs.cert, cs.key)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err, hint: "--cacert FILE and --cert FILE --key FILE take PEM files"}
	}
	cfg.InsecureSkipVerify = cs.insecure
	return cfg, nil
}

// chaosFaults reads --fault and --plan.
func chaosFaults(f *chaosFlags) ([]*chaos.Fault, error) {
	specs := f.faults
	if f.plan != "" {
		b, err := os.ReadFile(f.plan)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
				specs = append(specs, line)
			}
		}
	}
	var faults []*chaos.Fault
	for _, s := range specs {
		fault, err := chaos.ParseFault(s)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		faults = append(faults, fault)
	}
	return faults, nil
}

// chaosExec runs the proxy between stdin/stdout and the command.
func chaosExec(ctx context.Context, command string, opts chaos.Options) error {
	cmd := exec.Command("sh", "-c", command)
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return &exitError{code: exitTransport, err: err}
	}
	chaos.Pipe(ctx, stdio{os.Stdin, os.Stdout}, pipes{out, in}, opts)
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		err = <-done
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return &exitError{code: ee.ExitCode(), err: err}
	}
	return nil
}

// stdio is jrpc's own stdin and stdout as one stream.
type stdio struct {
	io.Reader
	io.Writer
}

func (stdio) Close() error { return os.Stdout.Close() }

// pipes is a subprocess's stdout and stdin as one stream.
type pipes struct {
	io.ReadCloser
	in io.WriteCloser
}

func (p pipes) Write(b []byte) (int, error) { return p.in.Write(b) }

func (p pipes) Close() error { return errors.Join(p.in.Close(), p.ReadCloser.Close()) }
