package streamable

import (
	"bytes"
	"sync"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// MaxDepth bounds the nesting of a message scanned here (the root's
// DefaultMaxDepth).
const MaxDepth = 128

// scan is a scanner and its message, reused.
type scan struct {
	sc wire.Scanner
	m  wire.Message
}

var scanPool = sync.Pool{New: func() any { return new(scan) }}

// parse scans msg with a scanner from the pool, calls fn with the message
// when it parses, and gives the scanner back.
func parse(msg []byte, fn func(m *wire.Message)) {
	s := scanPool.Get().(*scan)
	defer func() { s.sc.Data = nil; scanPool.Put(s) }()
	s.m.Limit = 0
	if s.sc.Parse(msg, MaxDepth, &s.m) == nil {
		fn(&s.m)
	}
}

// outgoing is what the client needs to know of a message, read in one
// scan: the calls it makes (requests with an id), the responses it holds,
// the id of a single "initialize" request ("" otherwise), and the id of a
// single call (nil otherwise).
type outgoing struct {
	calls, responses int
	init             string
	lone             []byte
}

// outline scans msg once for its outgoing (zero when it does not parse).
func outline(msg []byte) (o outgoing) {
	parse(msg, func(m *wire.Message) {
		for i := range m.Elems {
			switch e := &m.Elems[i]; {
			case e.Kind == wire.KindRequest && e.ID.Present():
				o.calls++
			case e.Kind == wire.KindResponse || e.Kind == wire.KindBadResponse:
				o.responses++
			}
		}
		if m.Batch || len(m.Elems) != 1 {
			return
		}
		if e := &m.Elems[0]; e.Kind == wire.KindRequest && e.ID.Present() {
			o.lone = bytes.Clone(e.ID.Of(msg))
			if string(e.MethodName(msg)) == "initialize" {
				o.init = string(o.lone)
			}
		}
	})
	return o
}

// initializedVersion returns the protocolVersion of msg's result when msg
// is the successful response with id, and the version is a plausible
// header value (visible ASCII, at most 64 bytes); else "".
func initializedVersion(msg []byte, id string) string {
	var result []byte
	parse(msg, func(m *wire.Message) {
		if m.Batch {
			return
		}
		if e := &m.Elems[0]; e.Kind == wire.KindResponse && string(e.ID.Of(msg)) == id && e.Result.Present() {
			result = e.Result.Of(msg)
		}
	})
	if result == nil {
		return ""
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if codec.UnmarshalResult(result, &res, false) != nil || len(res.ProtocolVersion) > 64 || !mcp.IsHeaderValue(res.ProtocolVersion) {
		return ""
	}
	return res.ProtocolVersion
}
