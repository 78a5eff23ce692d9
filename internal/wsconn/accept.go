package wsconn

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// SmallBuffers is a handshake's ResponseWriter whose Hijack gives the
// socket buffers of Size bytes (net/http's are 4 KiB each, held for the
// socket's lifetime), keeping any bytes the client sent after its
// handshake.
type SmallBuffers struct {
	http.ResponseWriter
	Size int
}

// Unwrap gives the wrapped ResponseWriter (http.ResponseController).
func (w SmallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack takes over the connection with buffers of w.Size bytes.
func (w SmallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Writer.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	var src io.Reader = nc
	n := brw.Reader.Buffered()
	if n > 0 {
		early, _ := brw.Reader.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(early)), nc)
	}
	br := bufio.NewReaderSize(src, max(w.Size, n))
	if n > 0 {
		br.Peek(n) // the early bytes are buffered, as they were in brw
	}
	return nc, bufio.NewReadWriter(br, bufio.NewWriterSize(nc, w.Size)), nil
}

// ConnectionHeader returns the handshake's headers a WebSocket connection
// keeps for its lifetime: all but those that served only the upgrade,
// which would otherwise stay in memory on every idle connection.
func ConnectionHeader(h http.Header) http.Header {
	keep := 0
	for k := range h {
		if !upgradeOnly(k) {
			keep++
		}
	}
	if keep == 0 {
		return nil
	}
	out := make(http.Header, keep)
	for k, v := range h {
		if !upgradeOnly(k) {
			out[k] = v
		}
	}
	return out
}

// upgradeOnly reports whether the (canonical) header name k matters only
// to the WebSocket handshake. Sec-WebSocket-Protocol is kept: it names
// what the client offered.
func upgradeOnly(k string) bool {
	switch k {
	case "Connection", "Upgrade", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions":
		return true
	}
	return false
}
