package connrt

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/seedhq/jsonrpc/internal/codec"
)

// ErrEmptyBatch is the error of a batch with no element: JSON-RPC has no
// empty batch.
var ErrEmptyBatch = errors.New("jsonrpc: empty batch")

// AppendBatch appends a batch of n elements to dst as one message. Element
// i is the request elem(i) returns; each call among them (not a
// notification) gets the next id of seq, and sent(i, id, group) is told
// it, group being the batch's first id: the group of its calls.
func AppendBatch(dst []byte, n int, seq *atomic.Uint64, elem func(i int) (method string, params any, call bool), sent func(i int, id, group uint64)) ([]byte, error) {
	if n == 0 {
		return dst, ErrEmptyBatch
	}
	var first uint64
	var idBuf [20]byte
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		method, params, call := elem(i)
		var idText []byte
		if call {
			id := seq.Add(1)
			if first == 0 {
				first = id
			}
			idText = strconv.AppendUint(idBuf[:0], id, 10)
			sent(i, id, first)
		}
		var err error
		if dst, err = codec.AppendRequest(dst, idText, method, params, nil); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// Wait waits for the result of each of n calls, which result(i) receives
// (once), and gives it to done(i, r), in order. It returns ctx's error if
// ctx ends first; the results there already are still given.
func Wait[R any](ctx context.Context, n int, result func(i int) chan R, done func(i int, r R)) error {
	for i := range n {
		var r R
		select {
		case r = <-result(i):
		default:
			select {
			case r = <-result(i):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		done(i, r)
	}
	return nil
}
