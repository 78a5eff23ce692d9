package streamable

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/sse"
	"github.com/seedhq/jsonrpc/internal/wire"
)

// With ServerConfig.Shared, the events of every session's streams are
// kept in a store that the server's instances share (sse.Shared), under
// the name "<session id>/<stream number>": a POST's stream gets a random
// number (an instance cannot know the numbers another gave), the
// standalone stream 0. A GET with Last-Event-ID for a POST's stream that
// this instance does not serve follows it in the store (follow): a stream
// of another instance, or one that has ended.

// shared is the place of stream num of session id in the shared store
// (nil without one); a POST's stream beats every KeepAlive (15 s when
// KeepAlive is none).
func (t *Sessions) shared(id string, num uint64) *sse.Shared {
	if t.cfg.Shared == nil {
		return nil
	}
	return &sse.Shared{Store: t.cfg.Shared, Name: id + "/" + strconv.FormatUint(num, 10), Beat: cmp.Or(max(t.cfg.KeepAlive, 0), 15*time.Second)}
}

// share numbers a POST's stream es at random and places it in the shared
// store, if there is one (s.mu held).
func (s *Session) share(es *sse.Stream) {
	if s.t.cfg.Shared == nil {
		return
	}
	for {
		es.Num = rand.Uint64() >> 1 // 63 bits: a collision across instances is improbable
		if _, used := s.streams[es.Num]; es.Num != 0 && !used {
			break
		}
	}
	es.Shared = s.t.shared(s.ID, es.Num)
}

// follow serves GET with Last-Event-ID for stream num of session s, which
// this instance does not serve (sse.Stream.Follow).
func (t *Sessions) follow(w http.ResponseWriter, r *http.Request, s *Session, num, seq uint64) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-t.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	es := &sse.Stream{Num: num, Shared: t.shared(s.ID, num), Retry: t.cfg.Retry, Timeout: t.cfg.WriteTimeout(), KeepAlive: t.cfg.KeepAlive}
	es.Shared.Silent = silentAnswers(3 * es.Shared.Beat)
	if err := es.Follow(ctx, sse.NewOut(w), seq, r.Header.Get(mcp.VersionHeader) >= mcp.Version2025); err != nil {
		attachFailed(w, err)
	}
}

// attachFailed answers a GET whose stream could not be attached or
// followed: 204 for a stream that ended with nothing more, 410 for events
// evicted, 400 for no such stream, 503 for a store that failed.
func attachFailed(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, sse.ErrStreamDone):
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, sse.ErrStreamGone):
		http.Error(w, err.Error(), http.StatusGone)
	case errors.Is(err, sse.ErrNoStream):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	}
}

// head is the head record of a POST's stream: the ids of its calls, and
// whether it was a batch.
type head struct {
	Batch bool              `json:"batch,omitempty"`
	IDs   []json.RawMessage `json:"ids"`
}

// Head returns the head record of the stream answering the calls of a
// POST's message data (e, or batch): what a Follow needs to answer them
// if the instance serving them dies.
func Head(data []byte, e *wire.Envelope, batch []wire.Envelope) []byte {
	h := head{Batch: e == nil, IDs: []json.RawMessage{}}
	if e != nil {
		batch = []wire.Envelope{*e}
	}
	for i := range batch {
		if batch[i].Kind == wire.KindRequest && batch[i].ID.Present() {
			h.IDs = append(h.IDs, json.RawMessage(batch[i].ID.Of(data)))
		}
	}
	b, _ := json.Marshal(h)
	return b
}

// silentAnswers returns the sse.Shared.Silent of a server whose
// streams are taken for dead after silence: an error (-32001) for each
// call of the head that the messages sent do not answer.
func silentAnswers(silence time.Duration) func(hd []byte, sent [][]byte) [][]byte {
	errObj := `,"error":{"code":-32001,"message":` + strconv.Quote("jsonrpc: the instance serving this call fell silent (nothing on its stream for "+silence.String()+"): its outcome is unknown") + `}}`
	return func(hd []byte, sent [][]byte) [][]byte {
		var h head
		if json.Unmarshal(hd, &h) != nil {
			return nil
		}
		answered := map[string]bool{}
		for _, msg := range sent {
			parse(msg, func(m *wire.Message) {
				for i := range m.Elems {
					if k := m.Elems[i].Kind; k == wire.KindResponse || k == wire.KindBadResponse {
						answered[string(m.Elems[i].ID.Of(msg))] = true
					}
				}
			})
		}
		var out [][]byte
		for _, id := range h.IDs {
			if !answered[string(id)] {
				out = append(out, append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), errObj...))
			}
		}
		if h.Batch && len(out) > 0 {
			return [][]byte{append(append([]byte{'['}, bytes.Join(out, []byte{','})...), ']')}
		}
		return out
	}
}
