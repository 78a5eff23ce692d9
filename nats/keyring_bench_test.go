package nats_test

import (
	"encoding/json"
	"fmt"

	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc/state"
)

// BenchmarkKeyRing compares a memory ring with a JetStream one (one
// embedded server on loopback, a second instance on its own connection):
//
//   - keys: one Keys read, what every request that signs or verifies a
//     requestState pays;
//   - seal, verify: greet's first round (signs a requestState) and its
//     answer round (verifies one), served by the Streamable HTTP handler
//     with the ring as InputRounds.KeyRing;
//   - rotate: one Rotate on instance A until instance B's ring shows the
//     new key, with that delay's p50 and p99 (memory: one shared ring).
func BenchmarkKeyRing(b *testing.B) {
	b.Run("memory", func(b *testing.B) {
		r, err := state.NewMemoryKeyRing(3, mrtrKey("k0"))
		if err != nil {
			b.Fatal(err)
		}
		benchKeyRing(b, r, r)
	})
	b.Run("jetstream", func(b *testing.B) {
		ns := runJetStream(b)
		ra, rb := newKeyRing(b, jsConn(b, ns), "bench", 3), newKeyRing(b, jsConn(b, ns), "bench", 3)
		if err := ra.Rotate(b.Context(), mrtrKey("k0")); err != nil {
			b.Fatal(err)
		}
		benchKeyRing(b, ra, rb)
	})
}

func benchKeyRing(b *testing.B, a, other state.KeyRing) {
	b.Run("keys", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if keys, err := a.Keys(b.Context()); err != nil || len(keys) == 0 {
				b.Fatalf("Keys = %v, %v", keys, err)
			}
		}
	})
	h := mrtrHandler(a)
	round := func(params string) string {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, mrtrRequest(b.Context(), "/", params))
		return w.Body.String()
	}
	var first struct {
		Result struct{ RequestState string } `json:"result"`
	}
	if err := json.Unmarshal([]byte(round(mrtrParams(""))), &first); err != nil || first.Result.RequestState == "" {
		b.Fatalf("first round: %v %+v", err, first)
	}
	for _, c := range []struct{ name, params, want string }{
		{"seal", mrtrParams(""), `"requestState"`},
		{"verify", mrtrParams(first.Result.RequestState), "Hello, Ada!"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if body := round(c.params); !strings.Contains(body, c.want) {
					b.Fatalf("round: %s", body)
				}
			}
		})
	}
	b.Run("rotate", func(b *testing.B) { benchRotate(b, a, other) })
}

// benchRotate rotates a new key in on a and waits until other shows it.
func benchRotate(b *testing.B, a, other state.KeyRing) {
	var seen []time.Duration
	n := 0
	for b.Loop() {
		n++
		id := fmt.Sprint(b.Name(), n)
		start := time.Now()
		if err := a.Rotate(b.Context(), mrtrKey(id)); err != nil {
			b.Fatal(err)
		}
		for {
			keys, err := other.Keys(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			if keys[0].ID == id {
				break
			}
			if time.Since(start) > 2*time.Second {
				b.Fatalf("rotation not seen by the other instance in 2s")
			}
			runtime.Gosched()
		}
		seen = append(seen, time.Since(start))
	}
	slices.Sort(seen)
	b.ReportMetric(float64(seen[len(seen)/2])/1e3, "p50-us")
	b.ReportMetric(float64(seen[len(seen)*99/100])/1e3, "p99-us")
}
