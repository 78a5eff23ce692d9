package resultstream

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// ResponseID reads the members of a response that come before its result,
// from head (the start of a message): LendYes with the id when "jsonrpc"
// and an id that ourID accepts come first and the result is an array,
// LendUndecided when head ends before that is known, LendNo otherwise (a
// batch, an error response, the result before the id, not JSON).
func ResponseID(head []byte, ourID func(raw []byte) (uint64, bool)) (uint64, framing.Lend) {
	switch first := bytes.TrimLeft(head, " \t\r\n"); {
	case len(first) == 0:
		return 0, framing.LendUndecided
	case first[0] != '{':
		return 0, framing.LendNo // not an object (a batch, or not JSON): read whole
	}
	h := responseHead{dec: jsontext.NewDecoder(bytes.NewReader(head)), head: head}
	if _, err := h.dec.ReadToken(); err != nil { // '{'
		return 0, undecidedOrNo(err)
	}
	var id uint64
	sawID := false
	for {
		name, lend := h.name()
		if lend != framing.LendYes {
			return 0, lend
		}
		switch name {
		case "jsonrpc", "id":
			v, lend := h.value()
			if lend != framing.LendYes {
				return 0, lend
			}
			if name == "id" {
				if id, sawID = ourID(v); !sawID {
					return 0, framing.LendNo
				}
			}
		case "result":
			if !sawID {
				return 0, framing.LendNo // the result before the id: read whole
			}
			switch h.dec.PeekKind() { // the result: lent when an array
			case '[':
				return id, framing.LendYes
			case 0:
				return id, framing.LendUndecided
			}
			return id, framing.LendNo
		default:
			return 0, framing.LendNo // an error response, or a member we do not know
		}
	}
}

// responseHead reads the start of a response for ResponseID. Each read
// returns LendYes when it read what it was asked for.
type responseHead struct {
	dec  *jsontext.Decoder
	head []byte
}

// atEnd reports whether the last read ended where head does: a number
// there may go on in the next bytes.
func (h *responseHead) atEnd() bool { return h.dec.InputOffset() == int64(len(h.head)) }

// name reads the next member's name (after a comma); anything else is not lent.
func (h *responseHead) name() (string, framing.Lend) {
	switch rest := bytes.TrimLeft(h.head[h.dec.InputOffset():], " \t\r\n,"); {
	case len(rest) == 0:
		return "", framing.LendUndecided
	case rest[0] != '"':
		return "", framing.LendNo
	}
	tok, err := h.dec.ReadToken()
	if err != nil || h.atEnd() {
		return "", undecidedOrNo(err)
	}
	return tok.String(), framing.LendYes
}

// value reads a member's value.
func (h *responseHead) value() (jsontext.Value, framing.Lend) {
	v, err := h.dec.ReadValue()
	if err != nil || h.atEnd() {
		return nil, undecidedOrNo(err)
	}
	return v, framing.LendYes
}

// undecidedOrNo: head ended too soon (undecided: no error, or an end of
// input), or is not JSON we lend.
func undecidedOrNo(err error) framing.Lend {
	if err == nil || err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return framing.LendUndecided
	}
	return framing.LendNo
}
