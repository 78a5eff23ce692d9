package jsonrpc

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"runtime/debug"
	"slices"

	"github.com/seedhq/jsonrpc/internal/httpx"
	"github.com/seedhq/jsonrpc/internal/resultstream"
)

// Stream is a result too large to hold: a handler returns one (a Register
// handler's result type, or a Handler's result value) and the server writes
// it as a JSON array, one element at a time, as the sequence yields them.
// The response is byte for byte that of the same elements in a slice, so
// any client reads it ([CallIter] element by element).
//
// An iter.Seq2[T, error] converts to a Stream[T]: jsonrpc.Stream[T](seq).
// The sequence runs after the handler has returned, on the goroutine that
// writes the reply, under the handler's context (cancelled when the peer
// goes away); a slow peer holds it back. HTTP writes a chunked body, a
// connection one message in pieces (others wait behind it); batches,
// Content-Length framing, Streamable HTTP, [Server.Process] and NATS encode
// the whole result first (docs/streaming.md).
//
// An error (yielded, or an element that cannot be encoded) before the first
// StreamChunk bytes are written gives an ordinary error response. After
// that the server cuts the response short, so the peer sees a broken
// message, never a complete wrong one: an HTTP body is aborted (unexpected
// EOF), a connection closed (failing the peer's calls on it). The error is
// logged.
//
// HandlerTimeout bounds the handler until it returns the Stream, not the
// writing of its elements; a stalled peer is bounded by WriteTimeout (and
// on HTTP by the http.Server's own timeouts).
type Stream[T any] func(yield func(T, error) bool)

// StreamChunk is how many encoded bytes a [Stream] gathers before it
// writes them: a stream that ends within it is sent as one ordinary
// message, and memory per stream stays near it.
const StreamChunk = 32 << 10

// streamer is what a Stream[T] is to the server, whatever its T.
type streamer interface {
	encodeStream(e *resultstream.Encoder) error
	elemType() reflect.Type
}

func (s Stream[T]) elemType() reflect.Type { return reflect.TypeFor[T]() }

// resultTypeOf is the type a result of type t is on the wire (MethodInfo.ResultType):
// a Stream[T] is a []T.
func resultTypeOf(t reflect.Type) reflect.Type {
	if t.Implements(reflect.TypeFor[streamer]()) {
		return reflect.SliceOf(reflect.Zero(t).Interface().(streamer).elemType())
	}
	return t
}

// encodeStream runs the sequence, handing each element to e. A panic (of
// the sequence, or of an element's MarshalJSON) is an element that cannot
// be encoded.
func (s Stream[T]) encodeStream(e *resultstream.Encoder) (err error) {
	if s == nil {
		return nil // no elements: []
	}
	defer func() {
		if p := recover(); p != nil {
			err = &resultstream.ElemError{N: e.Count(), Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
		}
	}()
	cur := new(T) // each element goes through it: encoding &cur boxes nothing per element
	for v, verr := range s {
		if verr != nil {
			return verr
		}
		*cur = v
		if err = e.Elem(cur); err != nil {
			break
		}
	}
	return err
}

// streamSlot takes the Stream a handler returned to a transport that can
// write a reply in pieces: serveElem leaves the response's head in the
// reply and the stream here, for the transport to write (writeStream).
type streamSlot struct {
	st  streamer
	req *Request // the request whose handler returned it (its ID and Method)
	ctx *lazyCtx // the handlers' context, cancelled once the stream is written (nil: not ours)
}

// finish ends the stream's context (if ours) and empties the slot.
func (sl *streamSlot) finish() {
	if sl.ctx != nil {
		sl.ctx.Cancel(errStreamDone, errStreamDone)
	}
	*sl = streamSlot{}
}

var errStreamDone = errors.New("jsonrpc: the stream is written")

// appendStream appends the response carrying st: its head only when the
// transport writes the stream (slot), otherwise the whole response.
func (s *Server) appendStream(out []byte, id ID, req *Request, st streamer) []byte {
	start := len(out)
	out = appendHead(out, id, `,"result":`)
	if req.stream != nil {
		*req.stream = &streamSlot{st: st, req: req}
		return out
	}
	e := resultstream.Encoder{Buf: append(out, '[')}
	if err := st.encodeStream(&e); err != nil {
		return appendResponse(out[:start], id, nil, s.streamError(req.Method, err))
	}
	return append(e.Buf, "]}"...)
}

// streamError is the error response's object for a stream that failed
// before anything of it was written.
func (s *Server) streamError(method string, err error) *Error {
	var ee *resultstream.ElemError
	if errors.As(err, &ee) {
		s.logger().Error("jsonrpc: a stream's element cannot be encoded as JSON", "method", method, "error", err)
		return &Error{Code: CodeInternalError, Message: "internal error: the result cannot be encoded as JSON"}
	}
	return s.toError(&Request{Method: method}, err)
}

// messageOpener is a Channel that can write a message in pieces (a stream
// with newline framing, WebSocket), or fails with framing.ErrNotIncremental.
type messageOpener interface {
	OpenMessage() (resultstream.Writer, error)
}

func (s stream) OpenMessage() (resultstream.Writer, error) { return s.Stream.OpenMessage() }

// writeStream writes the stream in slot after head, opening the message
// (open) past StreamChunk; failed (if set) hears at once of a failed write.
// It returns the whole reply, for the caller to send, when the message was
// never opened; err when it was cut short: the caller must end the
// connection (or abort the HTTP body).
func (s *Server) writeStream(slot *streamSlot, head []byte, open func() (resultstream.Writer, error), failed func(error)) (reply []byte, err error) {
	// Room for a chunk and the element that crosses it, once.
	e := resultstream.Encoder{Buf: append(slices.Grow(head, StreamChunk+StreamChunk/4), '['), Chunk: StreamChunk, Open: open, Failed: failed}
	start := len(head) - len(`{"jsonrpc":"2.0","id":,"result":`) - len(slot.req.ID.raw)
	err = slot.st.encodeStream(&e)
	if err == nil {
		if !e.Opened() {
			return append(e.Buf, "]}"...), nil
		}
		if err = e.End("]}"); err == nil {
			return nil, nil
		}
	}
	if !e.Opened() && !e.WriteFailed() {
		return appendResponse(e.Buf[:start], slot.req.ID, nil, s.streamError(slot.req.Method, err)), nil
	}
	if !e.WriteFailed() {
		s.logger().Error("jsonrpc: a stream failed after its response began; cutting it short", "method", slot.req.Method, "error", err)
		e.Abort(err)
	} else {
		s.logger().Debug("jsonrpc: writing a stream failed", "method", slot.req.Method, "error", err)
	}
	return nil, err
}

// sendStream writes the stream a handler of t returned, after head, on
// the connection (in pieces when the channel can). A stream cut short, or
// a failed write at once, closes the connection.
func (c *Conn) sendStream(t *task, head []byte) {
	slot := t.stream
	defer slot.finish()
	if c.ctx.Err() != nil {
		return
	}
	var open func() (resultstream.Writer, error)
	if mo, ok := c.ch.(messageOpener); ok {
		open = func() (resultstream.Writer, error) {
			w, err := mo.OpenMessage()
			if err == nil && t.held.Swap(false) {
				c.giveToken() // as for any reply: the slot goes back once it has its place
			}
			return w, err
		}
	}
	reply, err := c.srv.writeStream(slot, head, open, c.close)
	if err != nil {
		c.close(err)
		return
	}
	if reply != nil {
		c.sendQueued(t, reply)
	}
}

// serveHTTPStream writes the stream a handler returned as the response's
// body, chunked (gzipped for a client that accepts it, unless
// HTTPCompressMinSize says never); one that fits in StreamChunk goes as
// any reply. A stream cut short aborts the body (http.ErrAbortHandler).
func (s *Server) serveHTTPStream(w http.ResponseWriter, pi *peerInfo, slot *streamSlot, head []byte) {
	defer slot.finish()
	open := func() (resultstream.Writer, error) {
		h := w.Header()
		pi.ReplyHeader(h)
		h["Content-Type"] = jsonContentType
		gzipped := false
		if s.httpCompressMinSize() >= 0 { // a stream is never too small to gain
			h.Add("Vary", "Accept-Encoding")
			if gzipped = httpx.Accepts(pi.peer.Header); gzipped {
				h["Content-Encoding"] = httpx.Encoding
			}
		}
		w.WriteHeader(http.StatusOK)
		return httpx.NewChunkedBody(w, gzipped), nil
	}
	reply, err := s.writeStream(slot, head, open, nil)
	if err != nil {
		panic(http.ErrAbortHandler) // the client must not take a cut body for a whole one
	}
	if reply != nil {
		s.writeHTTPReply(w, pi, reply)
	}
}

// dropStream forgets a Stream whose response the handler timeout replaced.
func (r *Request) dropStream() {
	if r != nil && r.stream != nil {
		*r.stream = nil
	}
}

// CloseWrite closes standard output: a stream cut short ends the output,
// so that the peer sees the end rather than wait for the rest.
func (stdio) CloseWrite() error { return os.Stdout.Close() }

// messageGiver is a Channel that reuses the memory of the messages its
// caller is done with (the stream's large read buffers).
type messageGiver interface{ GiveBack(msg []byte) }

// giveBack hands a message back to the channel once nothing reads or keeps
// any part of it (requests answered, responses decoded: see sentBatch.whole).
func (c *Conn) giveBack(msg []byte) {
	if g, ok := c.ch.(messageGiver); ok {
		g.GiveBack(msg)
	}
}
