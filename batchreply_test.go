package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// replyChannel is a Channel that answers each batch it is sent with the
// message reply makes of the batch's ids, and records the messages given
// back to it (GiveBack), overwriting them: a reader that kept using one
// would see garbage.
type replyChannel struct {
	reply func(ids []string) string
	in    chan []byte
	once  sync.Once

	mu    sync.Mutex
	given []string // the messages given back, as they were
}

func newReplyChannel(reply func(ids []string) string) *replyChannel {
	return &replyChannel{reply: reply, in: make(chan []byte, 4)}
}

func (c *replyChannel) Send(msg []byte) error {
	ids, err := batchIDs(msg)
	if err != nil {
		return err
	}
	c.in <- []byte(c.reply(ids))
	return nil
}

// batchIDs returns the ids of the elements of a batch, in order.
func batchIDs(msg []byte) ([]string, error) {
	var elems []struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(msg, &elems); err != nil {
		return nil, err
	}
	ids := make([]string, len(elems))
	for i, e := range elems {
		ids[i] = string(e.ID)
	}
	return ids, nil
}

func (c *replyChannel) Recv() ([]byte, error) {
	msg, ok := <-c.in
	if !ok {
		return nil, io.EOF
	}
	return msg, nil
}

func (c *replyChannel) Close() error {
	c.once.Do(func() { close(c.in) })
	return nil
}

func (c *replyChannel) GiveBack(msg []byte) {
	c.mu.Lock()
	c.given = append(c.given, string(msg))
	c.mu.Unlock()
	for i := range msg {
		msg[i] = 'x'
	}
}

func (c *replyChannel) givenBack() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.given...)
}

// echoReply answers every id with {"n":<its index>}; extra, when not
// empty, is one more element.
func echoReply(extra func(ids []string) string) func([]string) string {
	return func(ids []string) string {
		parts := make([]string, len(ids))
		for i, id := range ids {
			parts[i] = `{"jsonrpc":"2.0","id":` + id + `,"result":{"n":` + strconv.Itoa(i) + `,"s":"element ` + strconv.Itoa(i) + `"}}`
		}
		if extra != nil {
			parts = append(parts, extra(ids))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
}

// TestBatchReplyGivenBack: a batch reply that answered every call of the
// batch with a result, and held nothing else, is given back to the channel
// once, after the results are decoded; a reply that holds an error, another
// response or a request is not (an error's data, or another reader, may
// still refer to it).
func TestBatchReplyGivenBack(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	cases := []struct {
		name  string
		reply func([]string) string
		given bool
	}{
		{"results", echoReply(nil), true},
		{"an error among them", func(ids []string) string {
			r := echoReply(nil)(ids[:len(ids)-1])
			return r[:len(r)-1] + `,{"jsonrpc":"2.0","id":` + ids[len(ids)-1] + `,"error":{"code":1,"message":"no","data":"kept"}}]`
		}, false},
		{"a response to no call", echoReply(func([]string) string { return `{"jsonrpc":"2.0","id":999999,"result":1}` }), false},
		{"a response twice", echoReply(func(ids []string) string { return `{"jsonrpc":"2.0","id":` + ids[0] + `,"result":{"n":7}}` }), false},
		{"a request", echoReply(func([]string) string { return `{"jsonrpc":"2.0","method":"nothing"}` }), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := newReplyChannel(tc.reply)
			c := NewConn(ch, &Server{Handler: NewMux()})
			defer c.Close()
			type res struct {
				N int    `json:"n"`
				S string `json:"s"`
			}
			const n = 20
			var b Batch
			out := make([]res, n)
			calls := make([]*BatchCall, n)
			for i := range calls {
				calls[i] = b.Call("m", []int{i}, &out[i])
			}
			if err := c.Batch(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			for i, bc := range calls {
				if tc.given || i < n-1 || !strings.HasPrefix(tc.name, "an error") {
					if bc.Err != nil {
						t.Fatalf("call %d: %v", i, bc.Err)
					}
					if want := (res{i, "element " + strconv.Itoa(i)}); out[i] != want {
						t.Fatalf("call %d: got %+v, want %+v", i, out[i], want)
					}
					continue
				}
				var e *Error
				if !errors.As(bc.Err, &e) || string(e.Data) != `"kept"` {
					t.Fatalf("call %d: got %v, want the error with its data", i, bc.Err)
				}
			}
			given := ch.givenBack()
			switch {
			case tc.given && (len(given) != 1 || given[0] != tc.reply(idsOf(t, given[0]))):
				t.Fatalf("given back %q, want the reply once", given)
			case !tc.given && len(given) != 0:
				t.Fatalf("given back %q, want nothing", given)
			}
		})
	}
}

// idsOf returns the ids of a batch reply, in order.
func idsOf(t *testing.T, reply string) []string {
	t.Helper()
	ids, err := batchIDs([]byte(reply))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
