package wire

import "bytes"

// HeadID reads the first bytes of a message (of a batch: of its first
// element), which may be cut anywhere, for the id of a response, up to its
// result or error: the digits of an id that is a plain number (nil when
// there is none before them). request reports a "method" member: a request.
func HeadID(b []byte) (digits []byte, request bool) {
	b = bytes.TrimLeft(b, " \t\r\n[")
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	b = b[1:]
	for {
		var key []byte
		var ok bool
		if key, b, ok = headMember(b); !ok {
			return nil, false
		}
		switch string(key) {
		case "method":
			return nil, true
		case "id":
			i := 0
			for i < len(b) && b[i] >= '0' && b[i] <= '9' {
				i++
			}
			return b[:i], false
		case "jsonrpc":
			if _, b, ok = headString(b); !ok {
				return nil, false
			}
		default: // the result or the error: the id, if any, comes after it
			return nil, false
		}
	}
}

// headMember reads the name of the next member of an object and its colon
// (the separating comma before it, if any), and returns the rest.
func headMember(b []byte) (name, rest []byte, ok bool) {
	if name, b, ok = headString(bytes.TrimLeft(b, " \t\r\n,")); !ok {
		return nil, nil, false
	}
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil, nil, false
	}
	return name, bytes.TrimLeft(b[1:], " \t\r\n"), true
}

// headString reads a string without escapes and returns its contents and
// the rest.
func headString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, nil, false
	}
	return b[1 : 1+end], b[2+end:], true
}
