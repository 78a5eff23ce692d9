package chaos

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc/internal/framing"
)

// maxMessage bounds a message the proxy reads on a stream: far over any
// endpoint's limit, so that the endpoints' own limits are what is tested.
const maxMessage = 1 << 30

func (p *Proxy) acceptStreams() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serveStream(nc)
		}()
	}
}

func (p *Proxy) serveStream(nc net.Conn) {
	network, addr := "tcp", p.target.Host
	if p.target.Scheme == "unix" {
		network, addr = "unix", p.target.Host+p.target.Path
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	var tc net.Conn
	var err error
	if p.target.Scheme == "tls" {
		tc, err = (&tls.Dialer{NetDialer: d, Config: p.opts.TargetTLS}).Dial(network, addr)
	} else {
		tc, err = d.Dial(network, addr)
	}
	if err != nil {
		nc.Close()
		return
	}
	// The target side writes in the framing the client's first bytes
	// chose, and the client side in the target's (the same, in practice).
	p.pipe(nc, tc)
}

// pipe runs one connection between two byte streams.
func (p *Proxy) pipe(client, target io.ReadWriteCloser) {
	c := p.streamConn(client, target)
	forget := p.track(c)
	defer forget()
	c.run()
}

// streamConn is a connection between two byte streams.
func (p *Proxy) streamConn(client, target io.ReadWriteCloser) *conn {
	var clientFraming, targetFraming atomic.Uint32
	return newConn(p, newStreamEnd(p, client, &targetFraming, &clientFraming), newStreamEnd(p, target, &clientFraming, &targetFraming))
}

// Close cuts the connection (at the proxy's Close).
func (c *conn) Close() error { c.shut(); return nil }

// meter is a byte stream the proxy can read slowly.
type meter struct {
	rw   io.ReadWriteCloser
	slow atomic.Bool
}

func (m *meter) Read(b []byte) (int, error) {
	if m.slow.Load() {
		time.Sleep(50 * time.Millisecond)
		b = b[:min(len(b), 64)]
	}
	return m.rw.Read(b)
}

func (m *meter) Write(b []byte) (int, error) { return m.rw.Write(b) }

func (m *meter) Close() error { return m.rw.Close() }

// streamEnd is a byte stream side: messages cut by internal/framing, and
// written in the framing of the other side's first bytes.
type streamEnd struct {
	p       *Proxy
	m       *meter
	st      *framing.Stream
	writeAs *atomic.Uint32 // the framing to write in
	readAs  *atomic.Uint32 // the framing read, once detected
	wbuf    []byte         // the framed message being written
}

func newStreamEnd(p *Proxy, rw io.ReadWriteCloser, writeAs, readAs *atomic.Uint32) *streamEnd {
	m := &meter{rw: rw}
	return &streamEnd{p: p, m: m, st: framing.New(m, framing.Auto, maxMessage, 0), writeAs: writeAs, readAs: readAs}
}

func (e *streamEnd) recv() ([]byte, error) {
	for {
		msg, err := e.st.Recv()
		var fe *framing.Error
		if errors.As(err, &fe) && !fe.Fatal {
			continue // over a gigabyte: not forwarded
		}
		if err != nil {
			return nil, err
		}
		e.readAs.Store(uint32(e.st.Framing()))
		return msg, nil
	}
}

func (e *streamEnd) done(msg []byte) { e.st.GiveBack(msg) }

// frame puts msg, framed, in the side's write buffer (reused: writes are
// serialised).
func (e *streamEnd) frame(msg []byte) []byte {
	b := e.wbuf[:0]
	f := framing.Framing(e.writeAs.Load())
	if f == framing.Auto {
		// The other side has said nothing yet (an answer the proxy makes
		// up to a first request): answer in the framing this side uses.
		f = framing.Framing(e.readAs.Load())
	}
	if f == framing.Header {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(msg)), 10)
		b = append(b, "\r\n\r\n"...)
		b = append(b, msg...)
	} else {
		b = append(append(b, msg...), '\n')
	}
	if cap(b) <= 64<<10 {
		e.wbuf = b
	}
	return b
}

func (e *streamEnd) write(msg []byte, o *writeOpts) error {
	b := e.frame(msg)
	cut := false
	if o.budget >= 0 && int64(len(b)) >= o.budget {
		b, cut = b[:o.budget], true
	}
	if o.budget >= 0 {
		o.budget -= int64(len(b))
	}
	var err error
	if o.rate > 0 {
		err = paced(e.p, b, o.rate, e.writeAll)
	} else {
		err = e.writeAll(b)
	}
	if err == nil && cut {
		err = errCut
	}
	return err
}

func (e *streamEnd) writeAll(b []byte) error {
	_, err := e.m.rw.Write(b)
	return err
}

func (e *streamEnd) slowDown() { e.m.slow.Store(true) }

func (e *streamEnd) close() { e.m.rw.Close() }
