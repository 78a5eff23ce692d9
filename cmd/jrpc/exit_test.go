package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodeRule drives the binary through one condition per row, over
// every transport and with every output flag: a refusal by the server
// (a JSON-RPC error, a limit: oversize as -32600, HTTP 413 or WebSocket
// close 1009, a rate limit as -32005 or HTTP 429) exits 1 with the error
// as one JSON object on stderr; a failed exchange exits 3 (issue 28,
// point 3).
func TestExitCodeRule(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"s":"`+strings.Repeat("x", 10<<20)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "rl.sock")
	limited := map[string]string{}
	for _, l := range []string{"tcp://127.0.0.1:0", "unix://" + sock, "http://127.0.0.1:0/", "ws://127.0.0.1:0/"} {
		u, _ := startListening(t, nil, "serve", "--rate-limit", "1", "--listen", l)
		limited[strings.SplitN(u, ":", 2)[0]] = u
	}
	flags := map[string][]string{"plain": nil, "-v": {"-v"}, "--raw": {"--raw"}}
	for _, transport := range []string{"tcp", "unix", "http", "ws"} {
		for fname, f := range flags {
			t.Run(transport+"/"+fname, func(t *testing.T) {
				call := func(u string, args ...string) result {
					return run(t, "", append(append([]string{"call"}, f...), append([]string{u}, args...)...)...)
				}
				wantRPC := func(r result, code int64, what string) {
					t.Helper()
					lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
					var e struct{ Code int64 }
					var env struct{ Error *struct{ Code int64 } }
					if fname == "--raw" && r.stderr == "" && json.Unmarshal([]byte(r.stdout), &env) == nil && env.Error != nil {
						e.Code = env.Error.Code // --raw prints the whole response on stdout
					} else if json.Unmarshal([]byte(lines[len(lines)-1]), &e) != nil {
						e.Code = 0
					}
					if r.code != exitRPCError || e.Code != code {
						t.Fatalf("%s: exit %d, stderr %q; want exit 1 and a %d error object as stderr's last line", what, r.code, cut(r.stderr), code)
					}
				}
				wantRPC(call(urls[transport], "error", `{"code":-32050,"message":"nope"}`), -32050, "an error response")
				wantRPC(call(urls[transport], "echo", "-d", "@"+big), -32600, "oversize")
				var r result
				for range 10 { // --rate-limit 1: a burst of 2, then 1 a second
					if r = call(limited[transport], "sum", "[1]"); r.code != 0 {
						break
					}
				}
				wantRPC(r, -32005, "rate limited")
				if r := call("tcp://127.0.0.1:1", "sum", "[1]"); transport == "tcp" && r.code != exitTransport {
					t.Fatalf("refused connection: exit %d, stderr %q", r.code, r.stderr)
				}
				if transport == "http" {
					r := call(strings.TrimSuffix(urls["http"], "rpc")+"nothere", "sum", "[1]")
					if r.code != exitTransport || !strings.Contains(r.stderr, "404") {
						t.Fatalf("HTTP 404: exit %d, stderr %q", r.code, r.stderr)
					}
				}
			})
		}
	}
}
