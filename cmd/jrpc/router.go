package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/seedhq/jsonrpc"
)

// router shares one target connection among many clients (bridge --shared,
// and every HTTP client). The requests it forwards get ids of its own
// ("jrpc-bridge-N"), so that clients that use the same ids do not mix; the
// answers get the client's id back, byte for byte. Nothing else of a message
// changes.
type router struct {
	b  *bridge
	up rawConn

	mu      sync.Mutex
	next    uint64
	pending map[string]*route // by the id the bridge gave (compact JSON)
	clients []*routed         // oldest first: requests of the target go to the first that can serve
	last    *routed           // the client that sent last: errors with a null id go to it
	done    chan struct{}     // closed when the target connection ends
}

type route struct {
	c  *routed
	id json.RawMessage // the client's own id
}

// routed is a client of a router.
type routed struct {
	send  func([]byte) error
	serve bool // it can take the target's requests (not HTTP)
}

const bridgeIDPrefix = "jrpc-bridge-"

func (r *router) connect(ctx context.Context) error {
	up, err := r.b.openTarget(ctx)
	if err != nil {
		return err
	}
	r.up = up
	r.done = make(chan struct{})
	go r.readTarget(context.WithoutCancel(ctx))
	return nil
}

func (r *router) close() error {
	err := r.up.Close()
	<-r.done
	return err
}

// readTarget routes the target's messages to the clients.
func (r *router) readTarget(ctx context.Context) {
	defer close(r.done)
	for {
		msg, err := r.up.Recv(ctx)
		if err != nil {
			return
		}
		if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '[' {
			r.routeBatch(ctx, b)
			continue
		}
		ids := messageIDs(msg, true)
		switch {
		case len(ids) == 1:
			c, out := r.restore(msg, ids[0])
			if c != nil {
				c.send(out)
			}
		case len(messageIDs(msg, false)) == 1: // a request of the target
			if c := r.server(); c != nil {
				c.send(msg)
			} else if id, ok := topLevelID(msg); ok {
				r.up.Send(ctx, []byte(`{"jsonrpc":"2.0","id":`+string(id)+`,"error":{"code":-32601,"message":"method not found (no client of the bridge can take requests)"}}`))
			}
		default: // a notification of the target: every client that can take it
			r.mu.Lock()
			cs := slices.Clone(r.clients)
			r.mu.Unlock()
			for _, c := range cs {
				if c.serve {
					c.send(msg)
				}
			}
		}
	}
}

// restore gives a response its client's id back and says whose it is.
func (r *router) restore(msg []byte, id string) (*routed, []byte) {
	r.mu.Lock()
	rt := r.pending[id]
	delete(r.pending, id)
	last := r.last
	r.mu.Unlock()
	if rt == nil {
		if id == "null" {
			return last, msg
		}
		return nil, nil // not ours (or its client left)
	}
	out, ok := replaceID(msg, rt.id)
	if !ok {
		return nil, nil
	}
	return rt.c, out
}

func (r *router) routeBatch(ctx context.Context, msg []byte) {
	var elems []json.RawMessage
	if json.Unmarshal(msg, &elems) != nil {
		return
	}
	byClient := map[*routed][][]byte{}
	var order []*routed
	for _, e := range elems {
		id, ok := topLevelID(e)
		if !ok {
			continue
		}
		c, out := r.restore(e, string(compact(id)))
		if c == nil {
			continue
		}
		if byClient[c] == nil {
			order = append(order, c)
		}
		byClient[c] = append(byClient[c], out)
	}
	for _, c := range order {
		c.send(append(append([]byte{'['}, bytes.Join(byClient[c], []byte{','})...), ']'))
	}
}

// server returns the oldest client that can take the target's requests.
func (r *router) server() *routed {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.clients {
		if c.serve {
			return c
		}
	}
	return nil
}

// toTarget gives the requests of msg (one, or a batch) ids of the bridge
// and sends it; it returns how many answers are due.
func (r *router) toTarget(ctx context.Context, c *routed, msg []byte) (int, error) {
	due := 0
	rewrite := func(m []byte) []byte {
		if len(messageIDs(m, false)) == 0 {
			return m // a notification, a response of the client, or invalid
		}
		id, _ := topLevelID(m)
		r.mu.Lock()
		r.next++
		bid := `"` + bridgeIDPrefix + strconv.FormatUint(r.next, 10) + `"`
		r.pending[bid] = &route{c: c, id: bytes.Clone(id)}
		r.mu.Unlock()
		out, ok := replaceID(m, json.RawMessage(bid))
		if !ok {
			return m
		}
		due++
		return out
	}
	if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) == nil && len(elems) > 0 {
			parts := make([][]byte, len(elems))
			for i, e := range elems {
				parts[i] = rewrite(e)
			}
			msg = append(append([]byte{'['}, bytes.Join(parts, []byte{','})...), ']')
			due = min(due, 1) // one array answers a batch
		}
	} else {
		msg = rewrite(msg)
	}
	r.mu.Lock()
	r.last = c
	r.mu.Unlock()
	return due, r.up.Send(ctx, msg)
}

// forget drops a departed client: its pending answers are discarded.
func (r *router) forget(c *routed) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clients = slices.DeleteFunc(r.clients, func(x *routed) bool { return x == c })
	for id, rt := range r.pending {
		if rt.c == c {
			delete(r.pending, id)
		}
	}
	if r.last == c {
		r.last = nil
	}
}

// serveClient routes one stream or WebSocket client until it or the target
// ends.
func (r *router) serveClient(ctx context.Context, client rawConn) {
	var mu sync.Mutex
	c := &routed{serve: true, send: func(b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		return client.Send(ctx, b)
	}}
	r.mu.Lock()
	r.clients = append(r.clients, c)
	r.mu.Unlock()
	defer r.forget(c)
	left := make(chan struct{})
	defer close(left)
	go func() {
		select {
		case <-r.done: // the target went away: so does the client
		case <-ctx.Done():
		case <-left:
			return
		}
		client.Close()
	}()
	ctx = context.WithoutCancel(ctx) // reads wait for messages only: Close ends them
	for {
		msg, err := client.Recv(ctx)
		if fe, ok := err.(*jsonrpc.FrameError); ok && !fe.Fatal {
			c.send(frameErrorResponse(fe))
			continue
		}
		if err != nil {
			client.Close()
			return
		}
		if _, err := r.toTarget(ctx, c, msg); err != nil {
			client.Close()
			return
		}
	}
}

// serveHTTP forwards one POST body and answers with the target's answer.
func (r *router) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "JSON-RPC over HTTP takes POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, jsonrpc.DefaultMaxMessageSize))
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write(frameErrorResponse(&jsonrpc.FrameError{Code: jsonrpc.CodeInvalidRequest, Msg: "message too large"}))
		return
	}
	var conn int64
	if r.b.rec != nil {
		conn = r.b.rec.conns.Add(1)
		r.b.rec.write(conn, "client", body)
	}
	reply := make(chan []byte, 1)
	c := &routed{send: func(b []byte) error {
		if r.b.rec != nil {
			r.b.rec.write(conn, "server", b)
		}
		select {
		case reply <- b:
		default:
		}
		return nil
	}}
	defer r.forget(c)
	due, err := r.toTarget(req.Context(), c, body)
	if err != nil {
		http.Error(w, "the bridge's target connection is closed", http.StatusBadGateway)
		return
	}
	if due == 0 && onlyNotifications(body) {
		w.WriteHeader(http.StatusAccepted) // notifications only: no answer comes
		return
	}
	ctx, cancel := callContext(req.Context())
	defer cancel()
	select {
	case b := <-reply:
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	case <-r.done:
		http.Error(w, "the bridge's target connection closed", http.StatusBadGateway)
	case <-ctx.Done():
		http.Error(w, fmt.Sprintf("no answer from %s within %v", r.b.name, global.timeout), http.StatusGatewayTimeout)
	}
}

// onlyNotifications reports whether msg is a notification or a batch of
// notifications only: nothing answers it.
func onlyNotifications(msg []byte) bool {
	elems := splitBatch(msg)
	if len(elems) == 0 {
		return false
	}
	for _, e := range elems {
		var n struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		if json.Unmarshal(e, &n) != nil || n.Method == nil || n.ID != nil {
			return false
		}
	}
	return true
}

// topLevelID returns the raw "id" member of a JSON object.
func topLevelID(msg []byte) (json.RawMessage, bool) {
	start, end, ok := idSpan(msg)
	if !ok {
		return nil, false
	}
	return json.RawMessage(msg[start:end]), true
}

// replaceID returns msg with the value of its top-level "id" member
// replaced by id; every other byte stays.
func replaceID(msg []byte, id json.RawMessage) ([]byte, bool) {
	start, end, ok := idSpan(msg)
	if !ok {
		return nil, false
	}
	out := make([]byte, 0, len(msg)-(end-start)+len(id))
	out = append(out, msg[:start]...)
	out = append(out, id...)
	return append(out, msg[end:]...), true
}

// idSpan finds the value of the top-level "id" member of a JSON object.
func idSpan(msg []byte) (start, end int, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(msg))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return 0, 0, false
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return 0, 0, false
		}
		name := tok.String() // before the next read voids tok
		before := dec.InputOffset()
		v, err := dec.ReadValue()
		if err != nil {
			return 0, 0, false
		}
		if name == "id" {
			end := int(dec.InputOffset())
			start := end - len(v)
			if start < int(before) {
				return 0, 0, false
			}
			return start, end, true
		}
	}
	return 0, 0, false
}
