package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/seedhq/jsonrpc"
)

// rawResults serves methods whose results are fixed JSON texts, over TCP
// and HTTP: what a server we did not write answers.
func rawResults(t *testing.T, results map[string]string) map[string]string {
	t.Helper()
	mux := jsonrpc.NewMux()
	for m, r := range results {
		mux.HandleFunc(m, func(context.Context, *jsonrpc.Request) (any, error) { return json.RawMessage(r), nil })
	}
	mux.HandleFunc("fail", func(context.Context, *jsonrpc.Request) (any, error) {
		return nil, (&jsonrpc.Error{Code: 7, Message: "no"}).WithData(json.RawMessage(`{"reason":"x","extra":[1]}`))
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Shutdown(context.Background()) })
	return map[string]string{"tcp": l.URL, "http": hs.URL}
}

type hover struct {
	Contents json.RawMessage `json:"contents"`
}

type resourceList struct {
	Resources []struct {
		URI string `json:"uri"`
	} `json:"resources"`
}

// Issue 26: a result holding members the caller's type does not name
// decodes (gopls' hover, MCP's resources/list, geth's blocks), through Call
// and through a Batch element, on a stream and on HTTP; WithStrictResults
// rejects them with an error naming the member and where it is.
func TestResultsIgnoreUnknownMembers(t *testing.T) {
	urls := rawResults(t, map[string]string{
		"hover":     `{"contents":{"kind":"markdown","value":"x"},"range":{"start":1}}`,
		"resources": `{"resources":[{"uri":"a://1","name":"one"},{"uri":"a://2","name":"two","mimeType":"text/plain"}],"nextCursor":"c"}`,
		"cased":     `{"Contents":1,"contents":2}`,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			c, err := jsonrpc.Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var h hover
			if err := c.Call(ctx, "hover", nil, &h); err != nil || string(h.Contents) != `{"kind":"markdown","value":"x"}` {
				t.Fatalf("hover: %v, %s", err, h.Contents)
			}
			var rl resourceList
			if err := c.Call(ctx, "resources", nil, &rl); err != nil || len(rl.Resources) != 2 || rl.Resources[1].URI != "a://2" {
				t.Fatalf("resources: %v, %+v", err, rl)
			}
			// Names stay case-sensitive: "Contents" is another (ignored) member.
			var cased struct {
				Contents int `json:"contents"`
			}
			if err := c.Call(ctx, "cased", nil, &cased); err != nil || cased.Contents != 2 {
				t.Fatalf("cased: %v, %+v", err, cased)
			}
			var b jsonrpc.Batch
			var bh hover
			var brl resourceList
			hc := b.Call("hover", nil, &bh)
			rc := b.Call("resources", nil, &brl)
			if err := c.Batch(ctx, &b); err != nil || hc.Err != nil || rc.Err != nil || len(bh.Contents) == 0 || len(brl.Resources) != 2 {
				t.Fatalf("batch: %v, %v, %v", err, hc.Err, rc.Err)
			}
			// Error data decodes leniently too.
			err = c.Call(ctx, "fail", nil, nil)
			var rpcErr *jsonrpc.Error
			var data struct {
				Reason string `json:"reason"`
			}
			if !errors.As(err, &rpcErr) || rpcErr.DecodeData(&data) != nil || data.Reason != "x" {
				t.Fatalf("error data: %v, %+v", err, data)
			}

			strict, err := jsonrpc.Dial(ctx, url, jsonrpc.WithStrictResults())
			if err != nil {
				t.Fatal(err)
			}
			defer strict.Close()
			err = strict.Call(ctx, "hover", nil, &h)
			if want := `jsonrpc: cannot decode the result of hover: at /range: unknown member`; err == nil || err.Error() != want {
				t.Fatalf("strict hover: got %v, want %s", err, want)
			}
			var se *jsonv2.SemanticError
			if !errors.As(err, &se) || !errors.Is(se.Err, jsonv2.ErrUnknownName) {
				t.Fatalf("strict hover: %v does not wrap the codec's error", err)
			}
			var b2 jsonrpc.Batch
			rc = b2.Call("resources", nil, &brl)
			if err := strict.Batch(ctx, &b2); err != nil {
				t.Fatal(err)
			}
			if want := `: at /resources/0/name: unknown member`; rc.Err == nil || !strings.HasSuffix(rc.Err.Error(), want) {
				t.Fatalf("strict batch: got %v, want …%s", rc.Err, want)
			}
		})
	}
}

// Lenient decoding drops only unknown members: a result whose type does not
// fit still fails, naming where, and a result with a duplicate name or
// invalid UTF-8 is refused before any decoding.
func TestLenientResultsStayExact(t *testing.T) {
	urls := rawResults(t, map[string]string{"wrong": `{"resources":[{"uri":5}]}`})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := jsonrpc.Dial(ctx, urls["tcp"])
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rl resourceList
	err = c.Call(ctx, "wrong", nil, &rl)
	if want := "jsonrpc: cannot decode the result of wrong: at /resources/0/uri: expected string, got number"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}

	for name, body := range map[string]string{
		"duplicate name": `{"jsonrpc":"2.0","id":1,"result":{"uri":"a","uri":"b"}}`,
		"invalid UTF-8":  "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"uri\":\"\xff\"}}",
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}))
		var v struct {
			URI string `json:"uri"`
		}
		err := jsonrpc.NewHTTPClient(hs.URL).Call(ctx, "m", nil, &v)
		hs.Close()
		if !errors.Is(err, jsonrpc.ErrInvalidResponse) {
			t.Errorf("%s: got %v (%+v), want ErrInvalidResponse", name, err, v)
		}
	}
}
