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
	eps := map[string]*endpoint{}
	var cur *endpoint
	sc := bufio.NewScanner(f)
	bad := func(n int, format string, args ...any) error {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...)), hint: "jrpc help config shows the format"}
	}
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "["); ok {
			name, ok = strings.CutSuffix(name, "]")
			name = strings.TrimSpace(name)
			if !ok || name == "" || strings.ContainsAny(name, " \t@") {
				return nil, bad(n, "%q is not a section header like [name]", line)
			}
			if eps[name] != nil {
				return nil, bad(n, "endpoint [%s] defined twice", name)
			}
			cur = &endpoint{name: name}
			eps[name] = cur
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return nil, bad(n, "%q is not key = value", line)
		}
		if cur == nil {
			return nil, bad(n, "%s = … comes before any [name] section", k)
		}
		switch k {
		case "url":
			cur.url = v
		case "exec":
			cur.exec = v
		case "header":
			cur.headers = append(cur.headers, v)
		case "framing":
			cur.framing = v
		case "ca":
			cur.ca = expandHome(v)
		case "cert":
			cur.cert = expandHome(v)
		case "key":
			cur.key = expandHome(v)
		default:
			return nil, bad(n, "unknown key %q (url, exec, header, framing, ca, cert, key)", k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, ep := range eps {
		if (ep.url == "") == (ep.exec == "") {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: endpoint [%s] needs exactly one of url = … and exec = …", path, ep.name)}
		}
		if (ep.cert == "") != (ep.key == "") {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s: endpoint [%s] has cert without key or key without cert", path, ep.name)}
		}
	}
	return eps, nil
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
