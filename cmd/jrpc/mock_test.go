package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mockDoc = `{
  "openrpc": "1.3.2",
  "info": {"title": "weather", "version": "1.0.0"},
  "methods": [
    {
      "name": "forecast",
      "params": [
        {"name": "city", "required": true, "schema": {"type": "string", "minLength": 1}},
        {"name": "days", "schema": {"type": "integer", "minimum": 1, "maximum": 7}}
      ],
      "result": {"name": "forecast", "schema": {"$ref": "#/components/schemas/Forecast"}},
      "examples": [
        {"name": "paris", "params": [{"name": "city", "value": "Paris"}, {"name": "days", "value": 2}],
         "result": {"name": "r", "value": {"city": "Paris", "days": [{"sky": "sun", "high": 21.5}, {"sky": "rain", "high": 17}]}}}
      ]
    },
    {
      "name": "ping",
      "params": [],
      "result": {"name": "pong", "schema": {"const": "pong"}}
    }
  ],
  "components": {"schemas": {
    "Forecast": {"type": "object", "required": ["city", "days"], "properties": {
      "city": {"type": "string"},
      "days": {"type": "array", "items": {"$ref": "#/components/schemas/Day"}}
    }},
    "Day": {"type": "object", "required": ["sky", "high"], "properties": {
      "sky": {"enum": ["sun", "cloud", "rain"]},
      "high": {"type": "number", "minimum": -40}
    }}
  }}
}`

func TestMockAnswersFromTheDocument(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "weather.json")
	os.WriteFile(doc, []byte(mockDoc), 0o600)
	tcp, _ := startListening(t, nil, "mock", doc, "--listen", "tcp://127.0.0.1:0")
	paris := `{"city":"Paris","days":[{"sky":"sun","high":21.5},{"sky":"rain","high":17}]}` + "\n"
	for name, tgt := range map[string][]string{"tcp": {tcp}, "stdio": {"--exec", bin + " mock " + doc + " --listen stdio:"}} {
		t.Run(name, func(t *testing.T) {
			// The example's params, by name in any order or by position: its result.
			expect(t, run(t, "", with(tgt, "call", "forecast", "city=Paris", "days=2")...), 0, paris)
			expect(t, run(t, "", with(tgt, "call", "forecast", `{"days":2,"city":"Paris"}`)...), 0, paris)
			expect(t, run(t, "", with(tgt, "call", "forecast", `["Paris",2]`)...), 0, paris)
			// Other valid params: a result built from the result schema.
			expect(t, run(t, "", with(tgt, "call", "forecast", "city=Oslo")...), 0, `{"city":"text","days":[{"high":-40,"sky":"sun"}]}`+"\n")
			expect(t, run(t, "", with(tgt, "call", "ping")...), 0, `"pong"`+"\n")
			// Params checked against their schemas.
			r := run(t, "", with(tgt, "call", "forecast", "city=Paris", "days=9")...)
			if r.code != exitRPCError || !strings.Contains(r.stderr, `"code":-32602`) || !strings.Contains(r.stderr, `"path":"/days"`) {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			r = run(t, "", with(tgt, "call", "forecast", `{"days":1}`)...)
			if r.code != exitRPCError || !strings.Contains(r.stderr, `-32602`) {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			r = run(t, "", with(tgt, "call", "nope")...)
			if r.code != exitRPCError || !strings.HasPrefix(r.stderr, `{"code":-32601`) {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			// rpc.discover is the document: list and describe work on a mock.
			r = run(t, "", with(tgt, "discover")...)
			var got, want any
			json.Unmarshal([]byte(r.stdout), &got)
			json.Unmarshal([]byte(mockDoc), &want)
			if r.code != 0 || !jsonEqual(got, want) {
				t.Fatalf("discover: %s", r.stdout)
			}
			if r := run(t, "", with(tgt, "list")...); !strings.Contains(r.stdout, "forecast(city string, days? integer) Forecast") {
				t.Fatalf("list: %q", r.stdout)
			}
		})
	}
	expect(t, run(t, "", "mock", filepath.Join(t.TempDir(), "none.json")), exitUsage, "")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"openrpc": "1.3.2",`), 0o600)
	if r := run(t, "", "mock", bad); r.code != exitUsage || !strings.Contains(r.stderr, "invalid JSON") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
