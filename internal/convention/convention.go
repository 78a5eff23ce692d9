package convention

import (
	"cmp"
	"encoding/json"
	"math"
	"strconv"

	"github.com/seedhq/jsonrpc/internal/wire"
)

// Convention is the jsonrpc package's Convention, with its values, which
// that package documents (ConventionNone, ConventionLSP, ConventionMCP).
type Convention uint8

const (
	None Convention = iota
	LSP             // Language Server Protocol 3.17
	MCP             // Model Context Protocol 2025-11-25
)

// CancelParams renders the params of cv's cancel of the request id (its
// JSON text); MCP's carry reason. It returns nil for None.
func CancelParams(cv Convention, id []byte, reason string) []byte {
	switch cv {
	case LSP:
		return append(append([]byte(`{"id":`), id...), '}')
	case MCP:
		p := append(append([]byte(`{"requestId":`), id...), `,"reason":`...)
		p = wire.AppendString(p, reason)
		return append(p, '}')
	}
	return nil
}

// CancelledID returns the JSON text of the id a cancel notification's
// params name (nil: none).
func CancelledID(params []byte, cv Convention) []byte {
	if cv == MCP {
		return member(params, "requestId")
	}
	return member(params, "id")
}

// TokenOf returns the JSON text of the progress token in a request's
// params (MCP: _meta.progressToken, LSP: workDoneToken), nil when there is
// none; it points into params.
func TokenOf(params []byte, cv Convention) []byte {
	if cv == MCP {
		return member(member(params, "_meta"), "progressToken")
	}
	return member(params, "workDoneToken")
}

// member returns the JSON text of the member name of the object obj (the
// last one of that name; nil: none).
func member(obj []byte, name string) (raw []byte) {
	wire.Members(obj, func(n, v []byte) {
		if string(n) == name {
			raw = v
		}
	})
	return raw
}

// AppendMCPProgress renders the params of MCP's notifications/progress.
func AppendMCPProgress(token []byte, progress, total float64, message string) []byte {
	p := append(append([]byte(`{"progressToken":`), token...), `,"progress":`...)
	p = strconv.AppendFloat(p, progress, 'g', -1, 64)
	if total > 0 && !math.IsInf(total, 0) {
		p = strconv.AppendFloat(append(p, `,"total":`...), total, 'g', -1, 64)
	}
	if message != "" {
		p = wire.AppendString(append(p, `,"message":`...), message)
	}
	return append(p, '}')
}

// AppendLSPProgress renders the params of LSP's $/progress: a percentage
// of total, beginning with the first report.
func AppendLSPProgress(token []byte, progress, total float64, message string, first bool) []byte {
	pct := progress
	if total > 0 {
		pct = 100 * progress / total
	}
	pct = math.Round(min(max(pct, 0), 100))
	p := append(append([]byte(`{"token":`), token...), `,"value":{"kind":`...)
	if first {
		p = wire.AppendString(append(p, `"begin","title":`...), message)
	} else {
		p = append(p, `"report"`...)
		if message != "" {
			p = wire.AppendString(append(p, `,"message":`...), message)
		}
	}
	p = strconv.AppendInt(append(p, `,"percentage":`...), int64(pct), 10)
	return append(p, "}}"...)
}

// LSPEnd renders the params of LSP's work-done "end" for token.
func LSPEnd(token []byte) []byte {
	return append(append([]byte(`{"token":`), token...), `,"value":{"kind":"end"}}`...)
}

// Report is a progress notification received. The jsonrpc package gives
// it as a Progress, which documents its fields.
type Report struct {
	Token    json.RawMessage
	Progress float64
	Total    float64
	Message  string
	Kind     string
	Params   json.RawMessage
}

// ParseProgress reads a progress notification's params; it reports false
// when they carry no token.
func ParseProgress(params []byte, cv Convention) (Report, bool) {
	p := Report{Params: json.RawMessage(append([]byte(nil), params...))}
	var tok []byte
	if cv == MCP {
		tok = p.readMCP(params)
	} else {
		tok = p.readLSP(params)
	}
	if tok == nil {
		return Report{}, false
	}
	p.Token = json.RawMessage(append([]byte(nil), tok...))
	return p, true
}

// readMCP reads the members of MCP's notifications/progress params into p
// and returns the token (nil: none).
func (p *Report) readMCP(params []byte) (tok []byte) {
	wire.Members(params, func(name, v []byte) {
		switch string(name) {
		case "progressToken":
			tok = v
		case "progress":
			p.Progress = jsonNumber(v)
		case "total":
			p.Total = jsonNumber(v)
		case "message":
			p.Message = jsonString(v)
		}
	})
	return tok
}

// readLSP reads the members of LSP's $/progress params into p and returns
// the token (nil: none).
func (p *Report) readLSP(params []byte) (tok []byte) {
	wire.Members(params, func(name, v []byte) {
		switch string(name) {
		case "token":
			tok = v
		case "value":
			title := ""
			wire.Members(v, func(name, v []byte) {
				switch string(name) {
				case "kind":
					p.Kind = jsonString(v)
				case "percentage":
					p.Progress, p.Total = jsonNumber(v), 100
				case "message":
					p.Message = jsonString(v)
				case "title":
					title = jsonString(v)
				}
			})
			p.Message = cmp.Or(p.Message, title)
		}
	})
	return tok
}

// jsonNumber is the JSON number v (0 for anything else).
func jsonNumber(v []byte) float64 {
	f, _ := strconv.ParseFloat(string(v), 64)
	return f
}

// jsonString is the JSON string v, unquoted ("" for anything else).
func jsonString(v []byte) string {
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	return string(wire.Unquote(v[1 : len(v)-1]))
}
