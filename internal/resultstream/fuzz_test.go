package resultstream

import (
	"bytes"
	"errors"
	"strconv"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/framing"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// maxDepth is the nesting the tests' scanner allows.
const maxDepth = 128

// errRPC stands for the call's error an error member becomes.
var errRPC = errors.New("an error response")

func errorObject([]byte) error { return errRPC }

// ourID accepts the ids a client numbers its calls with: decimal digits,
// no leading zero.
func ourID(raw []byte) (uint64, bool) {
	if len(raw) > 1 && raw[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil && raw[0] != '+'
}

// FuzzStreamedResponse feeds any body to CallIter's decoder (ReadResponse, EachElement): it never
// panics; a body it reads to the end without error is a valid JSON
// response (strict: no duplicate names, valid UTF-8) whose result is an
// array, and the elements it handed out are that array's, in order.
func FuzzStreamedResponse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":[1,2,3]}`,
		`{"result":[],"id":1,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"result":[{"a":"\u00e9"},[null],"x"]}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":1,"result":[1,2],"result":[3]}`,
		`{"jsonrpc":"2.0","id":null,"result":[1]}`,
		`[{"jsonrpc":"2.0","id":1,"result":[1]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var elems [][]byte
		err := ReadResponse(jsontext.NewDecoder(bytes.NewReader(body)), "1", func(dec *jsontext.Decoder) error {
			return EachElement(dec, "m", func(e []byte) (bool, error) {
				elems = append(elems, bytes.Clone(e))
				return true, nil
			})
		}, errorObject)
		if err != nil && !errors.Is(err, ErrInvalidResponse) && !errors.Is(err, errRPC) {
			t.Fatalf("an error neither invalid nor an error response: %v", err)
		}
		if err != nil {
			return
		}
		trimmed := bytes.TrimSpace(body)
		if !wire.Valid(trimmed) {
			t.Fatalf("accepted an invalid body: %q", body)
		}
		var sc wire.Scanner
		var m wire.Message
		if sc.Parse(trimmed, maxDepth, &m) != nil || m.Batch || !m.Elems[0].Result.Present() {
			t.Fatalf("accepted a body that is not a response with a result: %q", body)
		}
		var want []jsontext.Value
		if err := codec.Unmarshal(m.Elems[0].Result.Of(trimmed), &want); err != nil {
			t.Fatalf("accepted a result that is not an array: %q", body)
		}
		if len(want) != len(elems) {
			t.Fatalf("%d elements, the array has %d: %q", len(elems), len(want), body)
		}
		for i := range want {
			if !bytes.Equal(want[i], elems[i]) {
				t.Fatalf("element %d is %q, want %q", i, elems[i], want[i])
			}
		}
	})
}

// FuzzResponseID feeds any message to the check that decides whether
// a connection lends a response to CallIter, one prefix at a time, as the
// message arrives: it never panics, and once it has decided (lend, with an
// id, or not) a longer prefix decides the same; what it lends is a
// message whose id member, read whole, is that id.
func FuzzResponseID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":[1,2,3]}`,
		`{"id":12,"jsonrpc":"2.0","result":[]}`,
		` { "jsonrpc" : "2.0" , "id" : 7 , "result" : [ {"a":1} ] }`,
		`{"result":[1],"id":1,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":"1","result":[1]}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"result":[1]}`,
		`[{"jsonrpc":"2.0","id":1,"result":[1]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 512 {
			msg = msg[:512]
		}
		var decidedAt int
		var id uint64
		lend := framing.LendUndecided
		for n := 1; n <= len(msg); n++ {
			gotID, got := ResponseID(msg[:n], ourID)
			if lend == framing.LendUndecided {
				if got != framing.LendUndecided {
					lend, id, decidedAt = got, gotID, n
				}
				continue
			}
			if got != lend || gotID != id {
				t.Fatalf("decided %v (id %d) at %d bytes, then %v (id %d) at %d: %q", lend, id, decidedAt, got, gotID, n, msg)
			}
		}
		if lend != framing.LendYes {
			return
		}
		var sc wire.Scanner
		var m wire.Message
		m.Limit = 1
		head := msg[:decidedAt]
		if !bytes.Contains(head, []byte(`"id"`)) || !bytes.Contains(head, []byte(`"result"`)) {
			t.Fatalf("lent without an id and a result in %q", head)
		}
		if sc.Parse(msg, maxDepth, &m) == nil && !m.Batch && m.Elems[0].ID.Present() {
			if n, ok := ourID(m.Elems[0].ID.Of(msg)); !ok || n != id {
				t.Fatalf("lent as id %d a message whose id is %s: %q", id, m.Elems[0].ID.Of(msg), msg)
			}
		}
	})
}
