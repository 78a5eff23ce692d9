package chaos

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// wsProxy proxies WebSocket connections, a message a frame: each side
// writes in the type (text or binary) of the last frame the other read.
type wsProxy struct {
	p      *Proxy
	client *http.Client
}

func (h wsProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var protos []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			protos = append(protos, strings.TrimSpace(p))
		}
	}
	hdr := http.Header{}
	for _, k := range []string{"Authorization", "Origin", "Cookie"} {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	u := *h.p.target
	u.RawQuery = r.URL.RawQuery
	dctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	tc, _, err := websocket.Dial(dctx, u.String(), &websocket.DialOptions{Subprotocols: protos, HTTPHeader: hdr, HTTPClient: h.client})
	cancel()
	if err != nil {
		http.Error(w, "chaos: target: "+err.Error(), http.StatusBadGateway)
		return
	}
	cc, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protos, InsecureSkipVerify: true})
	if err != nil {
		tc.CloseNow()
		return
	}
	cc.SetReadLimit(maxMessage)
	tc.SetReadLimit(maxMessage)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	client, target := &wsEnd{p: h.p, c: cc, ctx: ctx}, &wsEnd{p: h.p, c: tc, ctx: ctx}
	client.peer, target.peer = target, client
	c := newConn(h.p, client, target)
	forget := h.p.track(c)
	defer forget()
	c.run()
}

// wsEnd is a WebSocket side.
type wsEnd struct {
	p      *Proxy
	c      *websocket.Conn
	peer   *wsEnd
	ctx    context.Context
	slow   atomic.Bool
	binary atomic.Bool // the last frame read was binary
}

func (e *wsEnd) recv() ([]byte, error) {
	if e.slow.Load() {
		e.p.sleep(50 * time.Millisecond)
	}
	typ, b, err := e.c.Read(e.ctx)
	e.binary.Store(typ == websocket.MessageBinary)
	return b, err
}

func (e *wsEnd) done([]byte) {}

// write writes one message; a budget too small for it closes the
// connection (a frame cannot be cut), a rate paces it as a whole.
func (e *wsEnd) write(b []byte, o *writeOpts) error {
	if o.budget >= 0 {
		if int64(len(b)) >= o.budget {
			o.budget = 0
			return errCut
		}
		o.budget -= int64(len(b))
	}
	if o.rate > 0 && !e.p.sleep(time.Duration(len(b))*time.Second/time.Duration(o.rate)) {
		return errCut
	}
	typ := websocket.MessageText
	if e.peer.binary.Load() {
		typ = websocket.MessageBinary
	}
	return e.c.Write(e.ctx, typ, b)
}

func (e *wsEnd) slowDown() { e.slow.Store(true) }

func (e *wsEnd) close() { e.c.CloseNow() }
