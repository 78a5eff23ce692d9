package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc/openrpc"
	"github.com/spf13/cobra"
)

// Shell completion of method names (and then param names) from the
// target's rpc.discover, for call, notify, describe and bench. The document
// is cached for completionTTL in $XDG_CACHE_HOME/jrpc/discover, so that
// pressing Tab again does not ask the server again.

const completionTTL = time.Minute

// addMethodCompletion sets the completion of the commands that take a
// method (called once every command has been added).
func addMethodCompletion() {
	for _, cmd := range rootCmd.Commands() {
		switch cmd.Name() {
		case "call", "notify", "describe", "bench":
			cmd.ValidArgsFunction = completeMethodArgs
		}
	}
}

// completeMethodArgs completes the argument after the target with method
// names, and the arguments after the method with its param names (name=).
func completeMethodArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	none := cobra.ShellCompDirectiveNoFileComp
	if len(args) == 0 && global.exec == "" && (os.Getenv("JRPC_URL") == "" || strings.HasPrefix(toComplete, "@")) {
		return completeEndpoints(toComplete), none // the target: the named endpoints
	}
	_, rest, err := targetArg(append(args, "x"))
	if err != nil {
		return nil, none
	}
	rest = rest[:len(rest)-1] // the arguments before the one completed, after the target
	d := cachedDiscovery(cmd.Context(), args)
	if d == nil {
		return nil, none
	}
	if len(rest) == 0 {
		var out []string
		for _, n := range d.names() {
			if strings.HasPrefix(n, toComplete) {
				m := d.doc.Method(n)
				out = append(out, n+"\t"+m.Summary)
			}
		}
		return out, none
	}
	if cmd.Name() == "describe" {
		return nil, none
	}
	r := &repl{doc: d}
	var out []string
	for _, name := range r.paramNames(rest[0]) {
		if strings.HasPrefix(name+"=", toComplete) && !containsPrefix(rest[1:], name+"=") {
			out = append(out, name+"=")
		}
	}
	return out, none | cobra.ShellCompDirectiveNoSpace
}

// completeEndpoints returns the @names of the endpoints file that start
// with toComplete, each with its URL.
func completeEndpoints(toComplete string) []string {
	eps, err := readEndpoints(configPath())
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range sortedKeys(eps) {
		if strings.HasPrefix("@"+name, toComplete) {
			out = append(out, "@"+name+"\t"+eps[name].url+eps[name].exec)
		}
	}
	return out
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// cachedDiscovery returns the discovery document of the target of args,
// from the cache when it is fresh; nil when there is none.
func cachedDiscovery(ctx context.Context, args []string) *discovery {
	t, _, err := newTarget(args)
	if err != nil {
		return nil
	}
	key := sha256.Sum256([]byte(t.raw + "\x00" + strings.Join(global.headers, "\x00")))
	path := ""
	if dir, err := os.UserCacheDir(); err == nil {
		path = filepath.Join(dir, "jrpc", "discover", hex.EncodeToString(key[:12])+".json")
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) < completionTTL {
		if raw, err := os.ReadFile(path); err == nil {
			if d, err := parseDiscovery(raw); err == nil {
				return d
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := t.dial(ctx)
	if err != nil {
		return nil
	}
	defer c.Close()
	var raw json.RawMessage
	if err := c.Call(ctx, openrpc.DiscoverMethod, nil, &raw); err != nil {
		return nil
	}
	d, err := parseDiscovery(raw)
	if err != nil {
		return nil
	}
	if path != "" && os.MkdirAll(filepath.Dir(path), 0o700) == nil {
		tmp := path + ".tmp"
		if os.WriteFile(tmp, raw, 0o600) == nil {
			os.Rename(tmp, path)
		}
	}
	return d
}
