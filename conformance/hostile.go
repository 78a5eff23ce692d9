package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const specHostile = specResponse + " (the Server MUST reply): a request after the bad input still gets its reply"

// hostileChecks send bad input, each at most Hostile.MaxBytes, all within
// Hostile.Duration; after each the server must still answer. What it
// answers to the bad input itself is its own choice (an error, nothing, a
// closed connection).
func hostileChecks() []check {
	m := `{"jsonrpc":"2.0","method":"` + unknownMethod + `","params":`
	pad := func(prefix, unit, suffix string, limit int64) []byte {
		n := max(0, int(limit-int64(len(prefix)+len(suffix)))/len(unit))
		return []byte(prefix + strings.Repeat(unit, n) + suffix)
	}
	cases := []struct {
		name    string
		payload func(max int64) []byte
	}{
		{"deep-nesting", func(limit int64) []byte {
			n := int(limit-int64(len(m)+10)) / 2
			return []byte(m + strings.Repeat("[", n) + strings.Repeat("]", n) + `,"id":1}`)
		}},
		{"huge-number", func(limit int64) []byte { return pad(m+"[1", "0", `],"id":1}`, limit) }},
		{"huge-exponent", func(int64) []byte { return []byte(m + `[1e999999999,-1e-999999999],"id":1e999999999}`) }},
		{"huge-string", func(limit int64) []byte { return pad(m+`["`, "x", `"],"id":1}`, limit) }},
		{"long-method", func(limit int64) []byte { return pad(`{"jsonrpc":"2.0","id":1,"method":"`, "m", `"}`, limit) }},
		{"many-keys", func(limit int64) []byte {
			var b strings.Builder
			b.WriteString(m + "{")
			for i := 0; int64(b.Len()) < limit-40; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"k` + strconv.Itoa(i) + `":0`)
			}
			b.WriteString(`},"id":1}`)
			return []byte(b.String())
		}},
		{"duplicate-keys", func(int64) []byte {
			return []byte(`{"jsonrpc":"2.0","method":"` + unknownMethod + `","method":"rpc.discover","id":1,"id":2}`)
		}},
		{"invalid-utf8", func(limit int64) []byte { return pad(m+`["`, "\xff\xfe\xc0", `"],"id":1}`, limit) }},
	}
	var cs []check
	for _, c := range cases {
		cs = append(cs, check{name: "hostile/" + c.name, level: MUST, spec: specHostile, mayClose: true, run: func(r *runner) error {
			if err := r.budget(); err != nil {
				return err
			}
			if err := r.send(c.payload(r.s.Hostile.MaxBytes)); err != nil {
				return r.survived(err)
			}
			return r.survived(nil)
		}})
	}
	return append(cs,
		check{name: "hostile/notification-flood", level: MUST, spec: specHostile, mayClose: true, run: (*runner).flood},
		check{name: "hostile/slow-reader", level: MUST, spec: specHostile, mayClose: true, run: (*runner).slowReader},
		check{name: "hostile/truncated", level: MUST, spec: specHostile, mayClose: true, run: (*runner).truncated},
	)
}

// budget starts the clock of the hostile checks at the first, and skips
// the checks once Hostile.Duration is spent.
func (r *runner) budget() error {
	if r.hostileEnd.IsZero() {
		r.hostileEnd = time.Now().Add(r.s.Hostile.Duration)
	}
	if time.Until(r.hostileEnd) <= 0 {
		return skip("the time allowed for the hostile checks is spent")
	}
	return nil
}

// survived checks that the server still answers a request after a hostile
// case: on this connection (passing over any replies still to come), or,
// when the server closed it, on a new one. A server process that exited
// did not survive.
func (r *runner) survived(err error) error {
	sent := r.sent
	defer func() { r.sent = sent }()
	if err == nil {
		err = r.answers()
	}
	var lost *lostError
	if errors.As(err, &lost) && !errors.Is(err, ErrServerExited) {
		r.drop()
		if err = r.ensureConn(); err == nil {
			err = r.answers()
		}
	}
	if err != nil {
		return fmt.Errorf("after it, the server does not answer: %w", err)
	}
	return nil
}

// answers sends a request and waits for its reply, passing over the
// replies that come before it.
func (r *runner) answers() error {
	msg := r.sentinel()
	if err := r.send(msg); err != nil {
		return err
	}
	want := sentinelID(msg)
	for {
		rep, err := r.next(r.s.Timeout)
		if err != nil {
			return err
		}
		if len(rep.items) == 1 && !rep.batch && string(rep.items[0].id()) == want {
			return nil
		}
	}
}

// flood sends notifications, up to MaxBytes in all and a quarter of the
// time left, without reading; then a request must get its reply.
func (r *runner) flood() error {
	if err := r.budget(); err != nil {
		return err
	}
	if _, ok := r.conn.(HTTPConn); ok {
		return skip("one HTTP request at a time: nothing to flood")
	}
	stop := time.Now().Add(time.Until(r.hostileEnd) / 4)
	msg := []byte(`{"jsonrpc":"2.0","method":"` + unknownMethod + `","params":[1,2,3]}`)
	for sent := int64(0); sent < r.s.Hostile.MaxBytes && time.Now().Before(stop); sent += int64(len(msg)) {
		if err := r.send(msg); err != nil {
			return r.survived(err)
		}
	}
	return r.survived(nil)
}

// slowReader sends requests whose replies add up to about MaxBytes and
// reads none of them for a while (the server's writes back up), then
// reads them; then a request must get its reply.
func (r *runner) slowReader() error {
	if err := r.budget(); err != nil {
		return err
	}
	rc, ok := r.conn.(RawConn)
	if !ok {
		return skip("not a stream: each reply is read with its request")
	}
	msg := request(`"slow"`)
	r.sent = msg
	n := int(r.s.Hostile.MaxBytes / int64(len(msg)))
	wrote := make(chan error, 1)
	go func() {
		for range n {
			if err := rc.Send(r.ctx, msg); err != nil {
				wrote <- &lostError{err}
				return
			}
		}
		wrote <- nil
	}()
	pause, cancel := context.WithTimeout(r.ctx, min(time.Second, time.Until(r.hostileEnd)/4))
	<-pause.Done()
	cancel()
	for got := 0; got < n; got++ {
		if _, err := r.next(r.s.Timeout); err != nil {
			break
		}
	}
	select {
	case err := <-wrote:
		return r.survived(err)
	case <-time.After(r.s.Timeout):
		r.drop() // unblocks the writer
		<-wrote
		return errors.New("the server stopped reading its input and answering")
	}
}

// truncated opens a second connection, sends part of a message on it and
// closes it; then a request on the first must get its reply.
func (r *runner) truncated() error {
	if err := r.budget(); err != nil {
		return err
	}
	part := request(`"truncated"`)
	part = part[:len(part)/2]
	if _, ok := r.conn.(HTTPConn); ok {
		if err := r.send(part); err != nil {
			return r.survived(err)
		}
		return r.survived(nil)
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.s.Timeout)
	defer cancel()
	c, err := r.target.Dial(ctx)
	if err != nil {
		return skip("no second connection: " + err.Error())
	}
	if rc, ok := c.(RawConn); ok {
		rc.WriteRaw(part)
	}
	c.Close()
	return r.survived(nil)
}
