package main

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// The endpoints file names targets, so that `jrpc call @local subtract …`
// needs no URL. It lives in $JRPC_CONFIG, else $XDG_CONFIG_HOME/jrpc/config
// (~/.config/jrpc/config). Its format:
//
//	# comments start with #
//	[local]
//	url = tcp://127.0.0.1:9090
//
//	[prod]
//	url = https://rpc.example.com/
//	header = Authorization: Bearer TOKEN   # repeatable
//	ca = /etc/ssl/private-ca.pem           # trust this CA (PEM)
//	cert = ~/.config/jrpc/client.pem       # client certificate (PEM) …
//	key = ~/.config/jrpc/client.key        # … and its key
//
//	[lsp]
//	exec = gopls serve                     # a stdio server instead of a URL
//	framing = lsp
const configHelp = `Named endpoints live in $JRPC_CONFIG, else $XDG_CONFIG_HOME/jrpc/config
(~/.config/jrpc/config), one section per name:

  [local]
  url = tcp://127.0.0.1:9090

  [prod]
  url = https://rpc.example.com/
  header = Authorization: Bearer TOKEN   (repeatable)
  ca = /path/to/ca.pem                   (trust this CA)
  cert = /path/to/client.pem             (client certificate, with key)
  key = /path/to/client.key

  [lsp]
  exec = gopls serve                     (a stdio server instead of a URL)
  framing = lsp

and are used as @local, @prod, @lsp wherever a URL goes (also in JRPC_URL).`

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "config",
		Short: "Named endpoints (@name) and JRPC_URL: the file and its format",
		Long:  configHelp,
	})
}

// endpoint is one named target of the endpoints file.
type endpoint struct {
	name      string
	url       string
	exec      string
	headers   []string
	framing   string
	ca        string
	cert, key string
}

// configPath returns where the endpoints file is looked for.
func configPath() string {
	if p := os.Getenv("JRPC_CONFIG"); p != "" {
		return p
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "jrpc", "config")
	}
	return ""
}

// lookupEndpoint reads the endpoints file and returns the one called name.
func lookupEndpoint(name string) (*endpoint, error) {
	path := configPath()
	eps, err := readEndpoints(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("no endpoint @%s: there is no endpoints file %s", name, path),
			hint: "create it with a section [" + name + "] and a line url = tcp://127.0.0.1:9090 (see jrpc help config)"}
	}
	if err != nil {
		return nil, err
	}
	ep := eps[name]
	if ep == nil {
		var names []string
		for n := range eps {
			names = append(names, "@"+n)
		}
		hint := "add a section [" + name + "] to " + path
		if len(names) > 0 {
			sort.Strings(names)
			hint = "the endpoints of " + path + " are " + strings.Join(names, ", ")
		}
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("no endpoint @%s in %s", name, path), hint: hint}
	}
	return ep, nil
}

// readEndpoints parses an endpoints file.
func readEndpoints(path string) (map[string]*endpoint, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := endpointsReader{path: path, eps: map[string]*endpoint{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if err := rd.line(n, sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := rd.check(); err != nil {
		return nil, err
	}
	return rd.eps, nil
}

// endpointsReader reads the config file's sections into endpoints.
type endpointsReader struct {
	path string
	eps  map[string]*endpoint
	cur  *endpoint // the section being read
}

func (rd *endpointsReader) bad(n int, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf("%s:%d: %s", rd.path, n, fmt.Sprintf(format, args...)), hint: "jrpc help config shows the format"}
}

// line reads line n: a [name] section header, a key = value, a comment
// or nothing.
func (rd *endpointsReader) line(n int, text string) error {
	line := strings.TrimSpace(text)
	if i := strings.Index(line, " #"); i >= 0 {
		line = strings.TrimSpace(line[:i])
	}
	if line == "" || line[0] == '#' {
		return nil
	}
	if strings.HasPrefix(line, "[") {
		return rd.section(n, line)
	}
	k, v, ok := strings.Cut(line, "=")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	switch {
	case !ok || v == "":
		return rd.bad(n, "%q is not key = value", line)
	case rd.cur == nil:
		return rd.bad(n, "%s = … comes before any [name] section", k)
	case !rd.cur.set(k, v):
		return rd.bad(n, "unknown key %q (url, exec, header, framing, ca, cert, key)", k)
	}
	return nil
}

// section starts the endpoint of a [name] header.
func (rd *endpointsReader) section(n int, line string) error {
	name, ok := strings.CutSuffix(line[1:], "]")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t@") {
		return rd.bad(n, "%q is not a section header like [name]", line)
	}
	if rd.eps[name] != nil {
		return rd.bad(n, "endpoint [%s] defined twice", name)
	}
	rd.cur = &endpoint{name: name}
	rd.eps[name] = rd.cur
	return nil
}

// set sets the endpoint's key to v; false for an unknown key.
func (ep *endpoint) set(k, v string) bool {
	switch k {
	case "url":
		ep.url = v
	case "exec":
		ep.exec = v
	case "header":
		ep.headers = append(ep.headers, v)
	case "framing":
		ep.framing = v
	case "ca":
		ep.ca = expandHome(v)
	case "cert":
		ep.cert = expandHome(v)
	case "key":
		ep.key = expandHome(v)
	default:
		return false
	}
	return true
}

// check refuses an endpoint with both or neither of url and exec, or half
// a client certificate.
func (rd *endpointsReader) check() error {
	for _, ep := range rd.eps {
		if (ep.url == "") == (ep.exec == "") {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s: endpoint [%s] needs exactly one of url = … and exec = …", rd.path, ep.name)}
		}
		if (ep.cert == "") != (ep.key == "") {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s: endpoint [%s] has cert without key or key without cert", rd.path, ep.name)}
		}
	}
	return nil
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}

// tlsConfig builds the client TLS configuration of an endpoint: nil when it
// names no files.
func (ep *endpoint) tlsConfig() (*tls.Config, error) {
	if ep.ca == "" && ep.cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ep.ca != "" {
		pem, err := os.ReadFile(ep.ca)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("endpoint @%s: cannot read its CA: %w", ep.name, err)}
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("endpoint @%s: %s holds no PEM certificate", ep.name, ep.ca)}
		}
	}
	if ep.cert != "" {
		c, err := tls.LoadX509KeyPair(ep.cert, ep.key)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("endpoint @%s: cannot load its client certificate: %w", ep.name, err)}
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}
