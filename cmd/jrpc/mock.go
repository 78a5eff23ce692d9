package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/spf13/cobra"
)

func init() {
	var (
		listen   []string
		verbose  bool
		shutdown time.Duration
		obs      observeFlags
	)
	cmd := &cobra.Command{
		Use:   "mock OPENRPC.json [--listen URL]...",
		Short: "Serve a mock of a service from its OpenRPC document",
		Long: `Serve every method of an OpenRPC document (a file, or - for standard input)
on every --listen URL, as serve does (the same URLs and flags):

  - params are checked against the method's param schemas: -32602 as usual;
  - params equal (as JSON values) to those of one of the method's examples
    get that example's result;
  - any other params get a result built from the result schema (its const,
    enum, default or examples when it has them, else a value of its type
    within its bounds);
  - rpc.discover answers with the document.

Without --listen it serves ` + strings.Join(defaultListen, " and ") + `.`,
		Example: `  jrpc mock openrpc.json --listen tcp://127.0.0.1:9090
  jrpc discover tcp://127.0.0.1:9090 > api.json && jrpc mock api.json --listen http://127.0.0.1:8081/
  jrpc --exec 'jrpc mock api.json --listen stdio:' call subtract '[42,23]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadMock(args[0])
			if err != nil {
				return err
			}
			return runServe(cmd.Context(), &jsonrpc.Server{Handler: m}, serving{listen: listen, verbose: verbose, shutdown: shutdown, obs: &obs})
		},
	}
	cmd.Flags().StringArrayVarP(&listen, "listen", "l", nil, "serve on `URL` (http://, ws://, tcp://, unix://, stdio:); repeatable")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log every call on stderr")
	obs.register(cmd)
	cmd.Flags().DurationVar(&shutdown, "shutdown-timeout", 10*time.Second, "on SIGINT/SIGTERM, wait this long for calls in flight")
	ownFlagsHelp(cmd, "framing")
	rootCmd.AddCommand(cmd)
}

// mock answers the methods of an OpenRPC document.
type mock struct {
	raw     json.RawMessage
	methods map[string]*mockMethod
}

type mockMethod struct {
	m        *openrpc.Method
	check    *openrpc.ParamsValidator
	examples []mockExample
	result   json.RawMessage // built from the result schema
}

// mockExample is an example's params, in both forms, and its result.
type mockExample struct {
	byPosition, byName string // canonical JSON
	result             json.RawMessage
}

func loadMock(path string) (*mock, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot read the OpenRPC document: %v", err)}
	}
	if err := checkJSON(raw, path); err != nil {
		return nil, err
	}
	doc, err := openrpc.ParseDocument(raw)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s is not an OpenRPC document: %v", path, err)}
	}
	d := &discovery{doc: doc}
	mk := &mock{raw: bytes.TrimSpace(raw), methods: map[string]*mockMethod{}}
	for _, m := range doc.Methods {
		v, err := openrpc.CompileMethod(m, d.defs())
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: method %s: %v", path, m.Name, err)}
		}
		mm := &mockMethod{m: m, check: v, result: json.RawMessage("null")}
		if m.Result != nil {
			mm.result = sampler{defs: d.defs(), all: true}.sample(m.Result.Schema)
		}
		for _, ex := range m.Examples {
			if ex.Result == nil {
				continue // an example of params only: the result is built
			}
			e := mockExample{result: ex.Result.Value}
			pos, named := []byte{'['}, []byte{'{'}
			for i, p := range ex.Params {
				if i > 0 {
					pos, named = append(pos, ','), append(named, ',')
				}
				pos = append(pos, p.Value...)
				named = append(append(append(named, marshal(p.Name)...), ':'), p.Value...)
			}
			e.byPosition = string(canonical(append(pos, ']')))
			e.byName = string(canonical(append(named, '}')))
			mm.examples = append(mm.examples, e)
		}
		mk.methods[m.Name] = mm
	}
	return mk, nil
}

// ServeRPC answers one call of the mocked service.
func (mk *mock) ServeRPC(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method == openrpc.DiscoverMethod {
		return mk.raw, nil
	}
	mm := mk.methods[req.Method]
	if mm == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", req.Method)
	}
	params := json.RawMessage(req.Params)
	if problems := mm.check.Check(params); len(problems) > 0 {
		return nil, openrpc.ParamsError(problems)
	}
	got := string(canonical(params))
	if len(bytes.TrimSpace(params)) == 0 {
		got = "[]" // no params: the example without params
	}
	for _, e := range mm.examples {
		if got == e.byPosition || got == e.byName || got == "[]" && e.byName == "{}" {
			return e.result, nil
		}
	}
	return mm.result, nil
}
