package resultstream

import (
	"errors"
	"fmt"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/framing"
)

// Writer writes one message in pieces; Close ends it, Abort gives it up
// (the channel fails: its peer could not find the next message).
type Writer interface {
	Write(p []byte) error
	Close() error
	Abort(cause error)
}

// Encoder gathers a result's encoded elements in Buf (which holds, before
// them, what the caller put there: the response's head and '[') and, with
// Open, writes them in pieces once they are Chunk bytes or more.
type Encoder struct {
	Buf   []byte
	Chunk int                    // the size from which Buf is written (with Open)
	Open  func() (Writer, error) // nil: gather everything; framing.ErrNotIncremental: gather the rest
	// Failed, when set, is told at once of a write that failed.
	Failed func(error)

	n    int    // elements encoded
	w    Writer // once open
	werr error  // a write failed (the peer is gone)
}

// ElemError is an element the codec could not encode.
type ElemError struct {
	N   int // its index
	Err error
}

func (e *ElemError) Error() string {
	return fmt.Sprintf("jsonrpc: element %d of the stream cannot be encoded as JSON: %v", e.N, e.Err)
}

func (e *ElemError) Unwrap() error { return e.Err }

// Elem appends the next element, writing what is gathered once over the chunk.
func (e *Encoder) Elem(v any) error {
	mark := len(e.Buf)
	if e.n > 0 {
		e.Buf = append(e.Buf, ',')
	}
	b, err := codec.AppendJSON(e.Buf, v, nil)
	if err != nil {
		e.Buf = e.Buf[:mark]
		return &ElemError{N: e.n, Err: err}
	}
	e.Buf = b
	e.n++
	if e.Open != nil && len(e.Buf) >= e.Chunk {
		return e.Flush()
	}
	return nil
}

// Flush writes what is gathered, opening the message first if needed.
func (e *Encoder) Flush() error {
	if e.w == nil {
		w, err := e.Open()
		if err != nil {
			if errors.Is(err, framing.ErrNotIncremental) {
				e.Open = nil // gather the rest too: written whole
				return nil
			}
			e.werr = err
			return err
		}
		e.w = w
	}
	if err := e.w.Write(e.Buf); err != nil {
		e.werr = err
		if e.Failed != nil {
			e.Failed(err)
		}
		return err
	}
	e.Buf = e.Buf[:0]
	return nil
}

// Opened reports whether the message was opened: some of it may be written.
func (e *Encoder) Opened() bool { return e.w != nil }

// Count is how many elements were encoded.
func (e *Encoder) Count() int { return e.n }

// WriteFailed reports whether opening or writing the message failed.
func (e *Encoder) WriteFailed() bool { return e.werr != nil }

// End writes what is left, after appending tail, and closes the opened
// message.
func (e *Encoder) End(tail string) error {
	e.Buf = append(e.Buf, tail...)
	if err := e.Flush(); err != nil {
		return err
	}
	return e.w.Close()
}

// Abort gives up the opened message, cut short.
func (e *Encoder) Abort(cause error) { e.w.Abort(cause) }
