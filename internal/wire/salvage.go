package wire

// ResponseID reads, from a message that did not parse (Parse failed), the
// id of the response it was, when what is left of it still shows one
// beyond doubt: data is a JSON object whose members, read in order up to
// the first byte that cannot be JSON there, include "id" with a number
// value that ends before that byte, and "result" or "error", and not
// "method". Bytes that are not valid UTF-8 are tolerated inside strings
// only (a corrupted byte there leaves the structure intact); anything else
// ends the reading, and what was read before it is all that counts. It
// returns the id's text and whether it found one.
func ResponseID(data []byte) ([]byte, bool) {
	r := salvager{data: data}
	r.skipSpace()
	if !r.byte('{') {
		return nil, false
	}
	var id []byte
	response := false
	for {
		r.skipSpace()
		name, ok := r.str()
		if !ok {
			break
		}
		r.skipSpace()
		if !r.byte(':') {
			break
		}
		switch string(name) {
		case "method":
			return nil, false
		case "result", "error":
			response = true // the member began: a response's
		}
		r.skipSpace()
		start := r.pos
		if !r.value() {
			break
		}
		v := data[start:r.pos]
		r.skipSpace()
		more := r.byte(',')
		if !more && !r.byte('}') {
			break // v may have been cut short: not taken
		}
		switch string(name) {
		case "id":
			if id != nil {
				return nil, false // two ids: which was it?
			}
			if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
				id = v
			}
		}
		if !more {
			break
		}
	}
	if id == nil || !response {
		return nil, false
	}
	return id, true
}

// salvager reads what it can of JSON text that may be broken.
type salvager struct {
	data []byte
	pos  int
}

func (r *salvager) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// byte consumes b if it comes next.
func (r *salvager) byte(b byte) bool {
	if r.pos < len(r.data) && r.data[r.pos] == b {
		r.pos++
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
	start := r.pos
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case '"':
			r.pos++
			return r.data[start : r.pos-1], true
		case '\\':
			r.pos++
		}
		r.pos++
	}
	return nil, false
}

// value reads one value: strings tolerantly, nested values by their
// brackets (each closed by its own kind), scalars as runs of the bytes
// they are made of.
func (r *salvager) value() bool {
	var open []byte // the closing brackets due, innermost last
	for {
		if r.pos >= len(r.data) {
			return false
		}
		switch c := r.data[r.pos]; {
		case c == '"':
			if _, ok := r.str(); !ok {
				return false
			}
		case c == '{' || c == '[':
			open = append(open, c+2) // '}' and ']'
			r.pos++
		case c == '}' || c == ']':
			if len(open) == 0 || open[len(open)-1] != c {
				return false
			}
			open = open[:len(open)-1]
			r.pos++
		case len(open) > 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			r.pos++
		case scalarByte(c):
			r.pos++
		default:
			return false
		}
		if len(open) == 0 && (r.pos >= len(r.data) || !scalarByte(r.data[r.pos]) || !scalarByte(r.data[r.pos-1])) {
			return true
		}
	}
}

// scalarByte reports whether c may be part of a number or a literal.
func scalarByte(c byte) bool {
	switch {
	case c >= '0' && c <= '9', c == '-', c == '+', c == '.':
		return true
	}
	switch c {
	case 'e', 'E', 't', 'r', 'u', 'f', 'a', 'l', 's', 'n':
		return true
	}
	return false
}
