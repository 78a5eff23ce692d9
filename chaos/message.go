package chaos

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
)

// envelope is what the proxy reads of a message: enough to match it and
// to answer it.
type envelope struct {
	Method *string         `json:"method"`
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// info is a message as the proxy sees it.
type info struct {
	method string   // the request's method, or the method a response answers
	ids    []string // the ids of the requests (In) or responses (Out) in it
	batch  bool
}

// elements returns msg's elements: a batch's, or msg itself.
func elements(msg []byte) ([]json.RawMessage, bool) {
	t := bytes.TrimLeft(msg, " \t\r\n")
	if len(t) > 0 && t[0] == '[' {
		var els []json.RawMessage
		if json.Unmarshal(t, &els) == nil {
			return els, true
		}
		return nil, true
	}
	return []json.RawMessage{msg}, false
}

// methods remembers, per connection (or POST), the method of each request
// by id, so that a response is matched by the method it answers.
type methods struct {
	mu   sync.Mutex
	byID map[string]string
}

// read parses msg going in direction dir. Requests record their method
// under their id; responses take theirs (and forget it).
func (m *methods) read(dir Dir, msg []byte) info {
	els, batch := elements(msg)
	in := info{batch: batch}
	for _, el := range els {
		var e envelope
		if json.Unmarshal(el, &e) != nil {
			continue
		}
		id := string(e.ID)
		switch {
		case e.Method != nil:
			if in.method == "" {
				in.method = *e.Method
			}
			if id != "" && id != "null" {
				in.ids = append(in.ids, id)
				m.remember(id, *e.Method)
			}
		case e.Result != nil || e.Error != nil:
			in.ids = append(in.ids, id)
			if meth := m.take(id); in.method == "" {
				in.method = meth
			}
		}
	}
	return in
}

func (m *methods) remember(id, method string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byID == nil {
		m.byID = make(map[string]string)
	}
	if len(m.byID) < 1<<16 { // bounded: a peer that never answers cannot grow it
		m.byID[id] = method
	}
}

func (m *methods) take(id string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	meth := m.byID[id]
	delete(m.byID, id)
	return meth
}

// errorReply is the answer Error gives to the ids: one response, or a batch
// of them (nil when there is no id to answer).
func errorReply(ids []string, code int64, batch bool) []byte {
	if len(ids) == 0 {
		return nil
	}
	var b []byte
	if batch {
		b = append(b, '[')
	}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, id...)
		b = append(b, `,"error":{"code":`...)
		b = strconv.AppendInt(b, code, 10)
		b = append(b, `,"message":"chaos: injected error"}}`...)
	}
	if batch {
		b = append(b, ']')
	}
	return b
}

// reversed returns a batch with its elements in reverse order (msg itself
// when it is not a batch).
func reversed(msg []byte) []byte {
	els, batch := elements(msg)
	if !batch || len(els) < 2 {
		return msg
	}
	b := []byte{'['}
	for i := len(els) - 1; i >= 0; i-- {
		b = append(b, els[i]...)
		if i > 0 {
			b = append(b, ',')
		}
	}
	return append(b, ']')
}

// corrupted returns a copy of msg with the byte at pos replaced by 0xFF.
func corrupted(msg []byte, pos int) []byte {
	c := bytes.Clone(msg)
	if len(c) > 0 {
		c[pos%len(c)] = 0xFF
	}
	return c
}
