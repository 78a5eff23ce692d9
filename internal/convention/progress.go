package convention

import (
	"errors"
	"math"
	"sync"
)

// ErrNotIncreasing is returned by Progress.Report for a value not above
// the last one reported (or not a finite number); nothing is sent. The
// root package sets it to its own (jsonrpc.ErrProgressNotIncreasing) in init.
var ErrNotIncreasing = errors.New("jsonrpc: progress must increase with each report")

// Progress is the progress reporting of one request being served under a
// Convention: its token (read from the request's params on the first
// report), the last value reported, and whether its handler has returned.
// Its methods may be called from any goroutine; each send is made under
// its lock, so that reports go out in order and none after End.
type Progress struct {
	Conv   Convention
	Params []byte // the request's params, valid while its handler runs
	// TokenOf returns the progress token in params, a copy (nil: none); it
	// is called once, on the first report.
	TokenOf func(params []byte, cv Convention) []byte

	mu       sync.Mutex
	ended    bool // the handler has returned: no more progress
	parsed   bool
	token    []byte
	last     float64
	reported bool
}

// Report sends, with send, the params of the progress notification for
// progress, total and message against the request's token; it does nothing
// when the request has no token or has ended. A value not above the last
// one reported is refused with ErrNotIncreasing, also without a token.
func (p *Progress) Report(progress, total float64, message string, send func(params []byte) error) error {
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return ErrNotIncreasing
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return nil
	}
	if p.reported && !(progress > p.last) {
		return ErrNotIncreasing // also without a token: the handler's mistake shows either way
	}
	if !p.parsed {
		p.parsed = true
		p.token = p.TokenOf(p.Params, p.Conv)
	}
	first := !p.reported
	p.last, p.reported = progress, true
	switch {
	case p.token == nil:
		return nil
	case p.Conv == MCP:
		return send(AppendMCPProgress(p.token, progress, total, message))
	}
	return send(AppendLSPProgress(p.token, progress, total, message, first))
}

// End stops the reports once the handler has returned; under LSP, when a
// "begin" went out and the request was not cancelled, it first sends the
// work-done "end" with send.
func (p *Progress) End(cancelled bool, send func(params []byte) error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ended = true
	if p.reported && p.token != nil && p.Conv == LSP && !cancelled {
		_ = send(LSPEnd(p.token))
	}
}
