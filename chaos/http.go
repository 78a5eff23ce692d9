package chaos

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// slowRate is SlowRead's pace on HTTP, in bytes a second (64 bytes every
// 50 ms, as on streams).
const slowRate = 1280

// hopHeaders are not forwarded (RFC 9110 §7.6.1); Accept-Encoding is
// dropped so that the proxy reads the messages it forwards.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "Te", "Trailer", "Upgrade", "Accept-Encoding", "Content-Length"}

func (p *Proxy) serveHTTP(ws bool) {
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second, TLSClientConfig: p.opts.TargetTLS}
	var h http.Handler = &httpProxy{p: p, client: &http.Client{Transport: tr}}
	if ws {
		// An upgrade is HTTP/1.1: a TLS config of its own keeps HTTP/2 off.
		wtr := &http.Transport{TLSClientConfig: p.opts.TargetTLS}
		if wtr.TLSClientConfig == nil {
			wtr.TLSClientConfig = &tls.Config{}
		}
		h = wsProxy{p, &http.Client{Transport: wtr}}
	}
	p.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.hs.Serve(p.ln)
		tr.CloseIdleConnections()
	}()
}

type httpProxy struct {
	p      *Proxy
	client *http.Client
}

// exchange is one HTTP request through the proxy: its POST's messages In,
// its answer's Out (a JSON body, or each event of an event stream).
type exchange struct {
	p       *Proxy
	client  *http.Client
	w       http.ResponseWriter
	r       *http.Request
	id      int64
	body    []byte
	method  string // the method of the POST's (first) request
	methods methods
	upRate  int64 // Bandwidth/SlowRead In: the upload's pace
	budget  int64 // CutAfterBytes In: the bytes of the body sent (-1: all)
}

func (h *httpProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{p: h.p, client: h.client, w: w, r: r, id: h.p.conns.Add(1), budget: -1}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMessage))
	if err != nil {
		return
	}
	x.body = body
	if len(body) > 0 {
		f, in := x.p.decide(In, body, &x.methods)
		x.method = in.method
		if f != nil {
			x.p.event(f, In, in, 1, x.id)
			if !x.actIn(f, in) {
				return
			}
		}
	}
	resp, err := x.forward(x.body)
	if err != nil {
		if x.budget >= 0 {
			panic(http.ErrAbortHandler)
		}
		http.Error(w, "chaos: target: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	x.answer(resp)
}

// forward sends the request, with body, to the target.
func (x *exchange) forward(body []byte) (*http.Response, error) {
	u := *x.p.target
	u.RawQuery = x.r.URL.RawQuery
	var rd io.Reader = bytes.NewReader(body)
	if x.budget >= 0 {
		rd = io.MultiReader(bytes.NewReader(body[:min(int64(len(body)), x.budget)]), errReader{})
	}
	if x.upRate > 0 {
		rd = &pacedReader{p: x.p, r: rd, rate: x.upRate}
	}
	req, err := http.NewRequestWithContext(x.r.Context(), x.r.Method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	req.Header = x.r.Header.Clone()
	for _, k := range hopHeaders {
		req.Header.Del(k)
	}
	return x.client.Do(req)
}

// actIn applies f to the POST's body; it reports whether the exchange
// goes on to the target.
func (x *exchange) actIn(f *Fault, in info) bool {
	switch f.Action {
	case Delay:
		return x.p.sleep(f.delay(x.p.dice))
	case Drop:
		x.hold()
		return false
	case HalfOpen:
		x.halfOpen()
		return false
	case Cut:
		panic(http.ErrAbortHandler)
	case Error:
		x.writeError(f, in)
		return false
	case Dup:
		if resp, err := x.forward(x.body); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	case Reorder:
		x.body = reversed(x.body)
	case Corrupt:
		x.body = corrupted(x.body, x.p.dice.intn(len(x.body)))
	case CutAfterBytes:
		x.budget = f.N
	case Bandwidth:
		x.upRate = f.N
	case SlowRead:
		x.upRate = slowRate
	}
	return true
}

// hold keeps the request unanswered until its client gives up or the
// proxy closes.
func (x *exchange) hold() {
	select {
	case <-x.r.Context().Done():
	case <-x.p.closed:
	}
}

// halfOpen takes the client's connection and neither reads nor writes it
// until the proxy closes.
func (x *exchange) halfOpen() {
	hj, ok := x.w.(http.Hijacker)
	if !ok {
		x.hold()
		return
	}
	nc, _, err := hj.Hijack()
	if err != nil {
		return
	}
	forget := x.p.track(nc)
	defer forget()
	<-x.p.closed
	nc.Close()
}

func (x *exchange) writeError(f *Fault, in info) {
	reply := errorReply(in.ids, f.Code, in.batch)
	if reply == nil {
		x.w.WriteHeader(http.StatusAccepted)
		return
	}
	x.w.Header().Set("Content-Type", "application/json")
	x.w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	x.w.Write(reply)
}

// answer forwards the target's answer, its messages through the faults.
func (x *exchange) answer(resp *http.Response) {
	h := x.w.Header()
	for k, v := range resp.Header {
		h[k] = v
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		x.w.WriteHeader(resp.StatusCode)
		x.flush()
		x.events(resp.Body)
		return
	case strings.HasPrefix(ct, "application/json") && resp.StatusCode/100 == 2:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		x.answerJSON(resp.StatusCode, body)
		return
	}
	x.w.WriteHeader(resp.StatusCode)
	io.Copy(x.w, resp.Body)
}

func (x *exchange) answerJSON(status int, body []byte) {
	var f *Fault
	var in info
	if len(body) > 0 {
		f, in = x.p.decide(Out, body, &x.methods)
	}
	rate, budget := int64(0), int64(-1)
	if f != nil {
		x.p.event(f, Out, in, 1, x.id)
		switch f.Action {
		case Delay:
			if !x.p.sleep(f.delay(x.p.dice)) {
				return
			}
		case Drop:
			x.hold()
			return
		case HalfOpen:
			x.halfOpen()
			return
		case Cut:
			panic(http.ErrAbortHandler)
		case Error:
			if r := errorReply(in.ids, f.Code, in.batch); r != nil {
				body = r
			}
		case Reorder:
			body = reversed(body)
		case Corrupt:
			body = corrupted(body, x.p.dice.intn(len(body)))
		case CutAfterBytes:
			budget = f.N
		case Bandwidth:
			rate = f.N
		case SlowRead:
			rate = slowRate
		}
	}
	x.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	x.w.WriteHeader(status)
	x.writeBody(body, rate, budget)
}

func (x *exchange) writeBody(body []byte, rate, budget int64) {
	cut := budget >= 0 && budget < int64(len(body))
	if cut {
		body = body[:budget]
	}
	write := func(b []byte) error {
		_, err := x.w.Write(b)
		x.flush()
		return err
	}
	if rate > 0 {
		paced(x.p, body, rate, write)
	} else {
		write(body)
	}
	if cut {
		panic(http.ErrAbortHandler)
	}
}

func (x *exchange) flush() {
	if fl, ok := x.w.(http.Flusher); ok {
		fl.Flush()
	}
}

// events forwards an event stream event by event: an event's data is a
// message, going Out.
func (x *exchange) events(body io.Reader) {
	br := bufio.NewReader(body)
	cutAfter, cutBy := int64(0), (*Fault)(nil)
	for _, f := range x.p.opts.Faults {
		if f.matchStream(x.method, x.p.dice) {
			cutAfter, cutBy = f.N, f
			break
		}
	}
	budget := int64(-1)
	for n := int64(0); ; {
		ev, data, err := readEvent(br)
		if len(ev) > 0 {
			if len(data) > 0 {
				n++
				var ok bool
				if ev, ok = x.eventFaults(ev, data, n, &budget); !ok {
					return
				}
			}
			x.writeBody(ev, 0, budget)
			if budget >= 0 {
				budget = max(budget-int64(len(ev)), 0)
			}
			if cutAfter > 0 && n >= cutAfter && len(data) > 0 {
				x.p.event(cutBy, Out, info{method: x.method}, n, x.id)
				panic(http.ErrAbortHandler)
			}
		}
		if err != nil {
			return
		}
	}
}

// eventFaults applies the first fault matching an event's message; it
// returns the event to write (nil: none) and whether the stream goes on.
func (x *exchange) eventFaults(ev, data []byte, n int64, budget *int64) ([]byte, bool) {
	f, in := x.p.decide(Out, data, &x.methods)
	if f == nil {
		return ev, true
	}
	x.p.event(f, Out, in, n, x.id)
	switch f.Action {
	case Delay:
		return ev, x.p.sleep(f.delay(x.p.dice))
	case Drop:
		return nil, true
	case HalfOpen:
		x.halfOpen()
		return nil, false
	case Cut:
		panic(http.ErrAbortHandler)
	case Error:
		if r := errorReply(in.ids, f.Code, in.batch); r != nil {
			return withData(ev, r), true
		}
	case Dup:
		return append(bytes.Clone(ev), ev...), true
	case Reorder:
		return withData(ev, reversed(data)), true
	case Corrupt:
		return withData(ev, corrupted(data, x.p.dice.intn(len(data)))), true
	case CutAfterBytes:
		if *budget < 0 {
			*budget = f.N
		}
	}
	return ev, true
}

// readEvent reads one event: its lines up to and including the blank line
// that ends it, and its data (data lines joined by newlines).
func readEvent(br *bufio.Reader) (ev, data []byte, err error) {
	for {
		line, err := br.ReadBytes('\n')
		ev = append(ev, line...)
		t := bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(t, []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
		}
		if err != nil || len(t) == 0 {
			return ev, data, err
		}
	}
}

// withData returns ev with its data lines replaced by one holding data.
func withData(ev, data []byte) []byte {
	var out []byte
	wrote := false
	for line := range bytes.Lines(ev) {
		if bytes.HasPrefix(line, []byte("data:")) {
			if !wrote {
				out = append(append(append(out, "data: "...), data...), '\n')
				wrote = true
			}
			continue
		}
		out = append(out, line...)
	}
	return out
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errCut }

// pacedReader reads at rate bytes a second.
type pacedReader struct {
	p    *Proxy
	r    io.Reader
	rate int64
}

func (r *pacedReader) Read(b []byte) (int, error) {
	b = b[:min(int64(len(b)), max(r.rate/20, 1))]
	n, err := r.r.Read(b)
	if n > 0 && !r.p.sleep(time.Duration(n)*time.Second/time.Duration(r.rate)) {
		return n, errors.Join(err, errCut)
	}
	return n, err
}
