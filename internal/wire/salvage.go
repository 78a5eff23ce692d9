package wire

import "strings"

// ResponseID reads, from a message that did not parse (Parse failed), the
// id of the response it was, when what is left of it still shows one
// beyond doubt: data is a JSON object whose members, read in order up to
// the first byte that cannot be JSON there, include "id" with a number
// value that ends before that byte, and "result" or "error", and not
// "method"; or an array (batch) of which an object read so is an element,
// with no element read before it that has a "method". Bytes that are not
// valid UTF-8 are tolerated inside strings only (a corrupted byte there
// leaves the structure intact); anything else ends the reading, and what
// was read before it is all that counts. It returns the id's text (the
// first found in a batch), whether data was an array, and whether it found
// an id.
func ResponseID(data []byte) (id []byte, batch, ok bool) {
	r := salvager{Cursor{Data: data}}
	r.skipSpace()
	if r.byte('{') {
		id, _, _ = r.response()
		return id, false, id != nil
	}
	if !r.byte('[') {
		return nil, false, false
	}
	for {
		r.skipSpace()
		if !r.byte('{') {
			return nil, true, false // a batch reply holds objects
		}
		id, whole, request := r.response()
		switch {
		case id != nil:
			return id, true, true
		case !whole || request:
			return nil, true, false
		}
		r.skipSpace()
		if !r.byte(',') {
			return nil, true, false
		}
	}
}

// response reads the members of an object whose '{' was read (see
// ResponseID): it returns the id of the response it shows, whether it
// read the object to its end, and whether the object has a "method".
func (r *salvager) response() (id []byte, whole, request bool) {
	response := false
	for !whole {
		r.skipSpace()
		name, ok := r.str()
		r.skipSpace()
		if !ok || !r.byte(':') {
			break
		}
		switch string(name) {
		case "method":
			return nil, false, true
		case "result", "error":
			response = true // the member began: a response's
		}
		r.skipSpace()
		start := r.Pos
		if !r.value() {
			break
		}
		v := r.Data[start:r.Pos]
		r.skipSpace()
		if whole = r.byte('}'); !whole && !r.byte(',') {
			break // v may have been cut short: not taken
		}
		if string(name) == "id" {
			if id != nil {
				return nil, false, false // two ids: which was it?
			}
			if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
				id = v
			}
		}
	}
	if !response {
		return nil, whole, false
	}
	return id, whole, false
}

// salvager reads what it can of JSON text that may be broken.
type salvager struct{ Cursor }

// byte consumes b if it comes next.
func (r *salvager) byte(b byte) bool {
	if r.Pos < len(r.Data) && r.Data[r.Pos] == b {
		r.Pos++
		return true
	}
	return false
}

// str reads a string and returns its raw contents (escapes not decoded:
// the names looked for have none).
func (r *salvager) str() ([]byte, bool) {
	if !r.byte('"') {
		return nil, false
	}
	start := r.Pos
	for r.Pos < len(r.Data) {
		switch r.Data[r.Pos] {
		case '"':
			r.Pos++
			return r.Data[start : r.Pos-1], true
		case '\\':
			r.Pos++
		}
		r.Pos++
	}
	return nil, false
}

// value reads one value: strings tolerantly, nested values by their
// brackets (each closed by its own kind), scalars as runs of the bytes
// they are made of.
func (r *salvager) value() bool {
	var open []byte // the closing brackets due, innermost last
	for r.Pos < len(r.Data) {
		var ok bool
		if open, ok = r.step(open); !ok {
			return false
		}
		if len(open) == 0 && (r.Pos >= len(r.Data) || !scalarByte(r.Data[r.Pos]) || !scalarByte(r.Data[r.Pos-1])) {
			return true // a scalar's run ends where the next byte cannot go on with it
		}
	}
	return false
}

// step reads one token of a value within the brackets open.
func (r *salvager) step(open []byte) ([]byte, bool) {
	switch c := r.Data[r.Pos]; {
	case c == '"':
		_, ok := r.str()
		return open, ok
	case c == '{' || c == '[':
		r.Pos++
		return append(open, c+2), true // '}' or ']'
	case c == '}' || c == ']':
		if len(open) == 0 || open[len(open)-1] != c {
			return open, false
		}
		r.Pos++
		return open[:len(open)-1], true
	case len(open) > 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'), scalarByte(c):
		r.Pos++
		return open, true
	}
	return open, false
}

// scalarByte reports whether c may be part of a number or a literal.
func scalarByte(c byte) bool {
	return c >= '0' && c <= '9' || strings.IndexByte("-+.eEtrufalsn", c) >= 0
}
