package streamable

import (
	"sync"

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

// CountMessages counts the calls (requests with an id) and the responses
// in a message (none when it does not parse).
func CountMessages(msg []byte) (calls, responses int) {
	parse(msg, func(m *wire.Message) {
		for i := range m.Elems {
			switch e := &m.Elems[i]; e.Kind {
			case wire.KindRequest:
				if e.ID.Present() {
					calls++
				}
			case wire.KindResponse, wire.KindBadResponse:
				responses++
			}
		}
	})
	return calls, responses
}

// initializeID returns the id of msg when it is a single "initialize"
// request, else "".
func initializeID(msg []byte) (id string) {
	parse(msg, func(m *wire.Message) {
		if m.Batch {
			return
		}
		if e := &m.Elems[0]; e.Kind == wire.KindRequest && e.ID.Present() && string(e.MethodName(msg)) == "initialize" {
			id = string(e.ID.Of(msg))
		}
	})
	return id
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
	if wire.UnmarshalResult(result, &res, false) != nil || len(res.ProtocolVersion) > 64 || !mcp.IsHeaderValue(res.ProtocolVersion) {
		return ""
	}
	return res.ProtocolVersion
}
