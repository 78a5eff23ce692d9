package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// runner holds the state of one run: the connection, what the current
// check sent and received, and what the whole run saw.
type runner struct {
	s      *Suite
	target Target
	ctx    context.Context
	rep    *Report
	conn   Conn
	seq    int

	sent, got []byte      // the current check's last message each way
	lost      []string    // the checks during which the connection was lost
	seen      []seenReply // every reply of the run, for the shape checks
	respelled []string    // ids echoed with the same value but other bytes
	idChecks  int         // id checks that got a response

	hostileEnd time.Time // when the hostile checks must end (zero: not started)

	demo *bool // whether the server has the spec's example methods (nil: not asked yet)
}

// seenReply is a reply and the message that provoked it.
type seenReply struct {
	sent  []byte
	reply *reply
}

// probe opens the first connection and checks that a request gets JSON
// back.
func (r *runner) probe() error {
	ctx, cancel := context.WithTimeout(r.ctx, r.s.Timeout)
	defer cancel()
	c, err := r.target.Dial(ctx)
	if err != nil {
		return err
	}
	r.conn = c
	rep, err := r.call(r.sentinel())
	if err != nil {
		r.close()
		return err
	}
	if rep.invalid != "" {
		r.close()
		return fmt.Errorf("the answer to a request is %s: %s", rep.invalid, clip(rep.raw))
	}
	return nil
}

// ensureConn dials when there is no connection.
func (r *runner) ensureConn() error {
	if r.conn != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.s.Timeout)
	defer cancel()
	c, err := r.target.Dial(ctx)
	if err != nil {
		return &lostError{fmt.Errorf("cannot connect again: %w", err)}
	}
	r.conn = c
	return nil
}

// drop closes the connection; the next check dials a new one.
func (r *runner) drop() {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
}

func (r *runner) close() { r.drop() }

// sentinel returns a request for a method no server has, with an id of
// its own: its reply (-32601) marks the point in the stream after which
// nothing sent before it may be answered.
func (r *runner) sentinel() []byte {
	r.seq++
	return []byte(`{"jsonrpc":"2.0","method":"conformance.sentinel","id":"sentinel-` + strconv.Itoa(r.seq) + `"}`)
}

func sentinelID(msg []byte) string {
	i := len(`{"jsonrpc":"2.0","method":"conformance.sentinel","id":`)
	return string(msg[i : len(msg)-1])
}

// send sends msg.
func (r *runner) send(msg []byte) error {
	r.sent, r.got = msg, nil
	ctx, cancel := context.WithTimeout(r.ctx, r.s.Timeout)
	defer cancel()
	if err := r.conn.Send(ctx, msg); err != nil {
		return &lostError{err}
	}
	return nil
}

// errNoReply is the failure of a request that got no reply.
type errNoReply struct {
	d      time.Duration
	status int // HTTP status, if any
	err    error
}

func (e *errNoReply) Error() string {
	if e.status != 0 {
		return fmt.Sprintf("no reply (HTTP %d %s with an empty body)", e.status, http.StatusText(e.status))
	}
	return fmt.Sprintf("no reply within %v", e.d)
}

func (e *errNoReply) Unwrap() error { return e.err }

// next returns the next reply within d, passing over the server's own
// requests and notifications. A reply that did not come is an
// *errNoReply; a lost connection a *lostError.
func (r *runner) next(d time.Duration) (*reply, error) {
	ctx, cancel := context.WithTimeout(r.ctx, d)
	defer cancel()
	for {
		b, err := r.conn.Recv(ctx)
		switch {
		case errors.Is(err, ErrNoReply):
			return nil, &errNoReply{d: d, status: r.httpStatus(), err: err}
		case errors.Is(err, context.DeadlineExceeded) && r.ctx.Err() == nil:
			return nil, &errNoReply{d: d, err: err}
		case err != nil:
			return nil, &lostError{err}
		}
		rep := parseReply(b)
		if len(rep.items) == 1 && !rep.batch && rep.items[0].isServerMessage() {
			continue
		}
		r.got = b
		r.seen = append(r.seen, seenReply{r.sent, rep})
		return rep, nil
	}
}

func (r *runner) httpStatus() int {
	if h, ok := r.conn.(HTTPConn); ok {
		s, _ := h.LastResponse()
		return s
	}
	return 0
}

// call sends msg and returns its reply.
func (r *runner) call(msg []byte) (*reply, error) {
	if err := r.send(msg); err != nil {
		return nil, err
	}
	return r.next(r.s.Timeout)
}

// single sends msg and returns its reply, which must be one object.
func (r *runner) single(msg []byte) (*response, error) {
	rep, err := r.call(msg)
	if err != nil {
		return nil, err
	}
	switch {
	case rep.invalid != "":
		return nil, fmt.Errorf("the reply is %s", rep.invalid)
	case rep.batch:
		return nil, errors.New("the reply is an array, not a single Response object")
	}
	return rep.items[0], nil
}

// silent sends msg, which must get no reply: over HTTP the response has no
// body; on a stream nothing comes within Quiet, and the reply to a request
// sent next is the next message.
func (r *runner) silent(msg []byte) (*reply, error) {
	if err := r.send(msg); err != nil {
		return nil, err
	}
	rep, err := r.next(r.s.Quiet)
	var none *errNoReply
	switch {
	case errors.As(err, &none) && errors.Is(err, ErrNoReply):
		return nil, nil // the transport says: no reply
	case err == nil:
		return rep, nil
	case !errors.As(err, &none):
		return nil, err
	}
	sent := r.sent
	rep, err = r.behind()
	r.sent = sent
	return rep, err
}

// behind sends a sentinel and waits for its reply. It returns the first
// message that came before it, if any.
func (r *runner) behind() (*reply, error) {
	msg := r.sentinel()
	if err := r.send(msg); err != nil {
		return nil, err
	}
	want := sentinelID(msg)
	rep, err := r.next(r.s.Timeout)
	if err != nil {
		var none *errNoReply
		if errors.As(err, &none) {
			return nil, fmt.Errorf("the request sent next (id %s, to see that nothing else comes first) got no reply within %v", want, r.s.Timeout)
		}
		return nil, err
	}
	if len(rep.items) == 1 && !rep.batch && string(rep.items[0].id()) == want {
		r.got = nil // the sentinel's reply is not the check's
		return nil, nil
	}
	return rep, nil
}

// alive checks that the server answers a request on the connection.
func (r *runner) alive() error {
	msg := r.sentinel()
	rep, err := r.call(msg)
	if err != nil {
		return err
	}
	if len(rep.items) != 1 || rep.batch || string(rep.items[0].id()) != sentinelID(msg) {
		return fmt.Errorf("a request (id %s) got %s", sentinelID(msg), clip(rep.raw))
	}
	return nil
}
