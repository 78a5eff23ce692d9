// Command defective is a JSON-RPC 2.0 server with one deliberate defect,
// for the tests of jrpc conform: each defect must be caught and named. It
// is our server (jsonrpc.Server.Process, with no methods) seen through a
// change of its input or output that reproduces a mistake found in the
// wild; -defect none leaves it correct.
//
//	defective -defect NAME -listen http://127.0.0.1:0/ | tcp://127.0.0.1:0 | stdio:
//
// It prints "listening on URL" on standard error (not for stdio:). Streams
// are newline-delimited.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/seedhq/jsonrpc"
)

// defects maps each defect's name to the server it makes of process.
var defects = map[string]func(process func([]byte) []byte) func([]byte) []byte{
	"none": func(p func([]byte) []byte) func([]byte) []byte { return p },
	// A reply to every notification.
	"answers-notifications": func(p func([]byte) []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			if out := p(in); out != nil || !bytes.HasPrefix(bytes.TrimSpace(in), []byte("{")) {
				return out
			}
			return []byte(`{"jsonrpc":"2.0","id":null,"result":null}`)
		}
	},
	// A string id that looks like a number comes back as a number.
	"string-id-as-number": output(func(out []byte) []byte {
		return regexp.MustCompile(`"id":"(-?[0-9]+)"`).ReplaceAll(out, []byte(`"id":$1`))
	}),
	// Valid JSON that is not a Request gets -32700 instead of -32600.
	"parse-error-for-invalid-request": output(func(out []byte) []byte {
		return bytes.ReplaceAll(out, []byte(`"code":-32600`), []byte(`"code":-32700`))
	}),
	// An empty batch is answered with an empty array.
	"empty-batch-answered-with-array": func(p func([]byte) []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			if string(bytes.TrimSpace(in)) == "[]" {
				return []byte("[]")
			}
			return p(in)
		}
	},
	// A batch of notifications is answered with an empty array.
	"empty-array-for-notifications": func(p func([]byte) []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			if out := p(in); out != nil || !bytes.HasPrefix(bytes.TrimSpace(in), []byte("[")) {
				return out
			}
			return []byte("[]")
		}
	},
	// Numeric ids go through a float64 (as in JavaScript): past 2^53 they
	// change.
	"big-id-precision": output(func(out []byte) []byte {
		return regexp.MustCompile(`"id":(-?[0-9][0-9.eE+-]*)`).ReplaceAllFunc(out, func(m []byte) []byte {
			f, err := strconv.ParseFloat(string(m[len(`"id":`):]), 64)
			if err != nil {
				return m
			}
			return []byte(`"id":` + strconv.FormatFloat(f, 'f', -1, 64))
		})
	}),
	// "jsonrpc":"1.0" is served as if it were "2.0".
	"accepts-jsonrpc-1.0": func(p func([]byte) []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			return p(bytes.ReplaceAll(in, []byte(`"jsonrpc":"1.0"`), []byte(`"jsonrpc":"2.0"`)))
		}
	},
	// Error responses carry "result":null as well.
	"result-and-error": output(func(out []byte) []byte {
		return bytes.ReplaceAll(out, []byte(`"error":`), []byte(`"result":null,"error":`))
	}),
}

// output makes a defect that changes the server's replies with f.
func output(f func([]byte) []byte) func(func([]byte) []byte) func([]byte) []byte {
	return func(p func([]byte) []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			if out := p(in); out != nil {
				return f(out)
			}
			return nil
		}
	}
}

func main() {
	defect := flag.String("defect", "none", "the defect")
	listen := flag.String("listen", "stdio:", "http://HOST:PORT/, tcp://HOST:PORT or stdio:")
	flag.Parse()
	d, ok := defects[*defect]
	if !ok {
		fmt.Fprintf(os.Stderr, "defective: unknown -defect %q\n", *defect)
		os.Exit(2)
	}
	srv := &jsonrpc.Server{Handler: jsonrpc.NewMux()}
	serve := d(func(in []byte) []byte { return srv.Process(context.Background(), in) })
	if err := run(*listen, serve); err != nil {
		fmt.Fprintln(os.Stderr, "defective:", err)
		os.Exit(1)
	}
}

func run(listen string, serve func([]byte) []byte) error {
	switch {
	case listen == "stdio:":
		return lines(os.Stdin, os.Stdout, serve)
	case strings.HasPrefix(listen, "http://"):
		l, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(listen, "http://"), "/"))
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "listening on http://%s/\n", l.Addr())
		return http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			out := serve(body)
			if out == nil {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(out)
		}))
	case strings.HasPrefix(listen, "tcp://"):
		l, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(listen, "tcp://"), "/"))
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "listening on tcp://%s\n", l.Addr())
		for {
			c, err := l.Accept()
			if err != nil {
				return err
			}
			go func() { defer c.Close(); lines(c, c, serve) }()
		}
	}
	return fmt.Errorf("-listen %q: want an http, tcp or stdio URL", listen)
}

// lines serves newline-delimited messages from r on w.
func lines(r io.Reader, w io.Writer, serve func([]byte) []byte) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if out := serve(line); out != nil {
				if _, werr := w.Write(append(out, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			return nil
		}
	}
}
