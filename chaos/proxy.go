package chaos

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a proxy started with Start.
type Options struct {
	Faults []*Fault
	Seed   uint64    // seeds P, delay distributions and Corrupt's positions (0: 1)
	Log    io.Writer // each injected fault as one line (nil: none)
	JSON   bool      // Log gets one JSON object a line
	// TargetTLS configures the TLS of tls://, https:// and wss:// targets
	// (nil: the system's roots); the proxy itself listens in the clear.
	TargetTLS *tls.Config
}

// Event is one injected fault.
type Event struct {
	Time   time.Time `json:"time"`
	Action Action    `json:"action"`
	Dir    string    `json:"dir"`
	Method string    `json:"method"`
	// Msg is the message's number on its connection in its direction
	// (1-based); on HTTP, the POST is message 1 of its request, and an
	// event-stream answer numbers its events.
	Msg   int64  `json:"msg"`
	Conn  int64  `json:"conn"` // the connection (HTTP: the request), numbered from 1
	ID    string `json:"id,omitempty"`
	Fault string `json:"fault"`
}

func (e Event) String() string {
	s := fmt.Sprintf("chaos: %s dir=%s method=%s msg=%d conn=%d", e.Action, e.Dir, e.Method, e.Msg, e.Conn)
	if e.ID != "" {
		s += " id=" + e.ID
	}
	return s + " fault=" + e.Fault
}

// Proxy is a running fault proxy.
type Proxy struct {
	URL string // the proxy's URL, of the target's scheme
	// Addr is the address it listens on (host:port, or a socket's path).
	Addr string

	opts     Options
	dice     *dice
	parse    bool // messages are read to match or report them (see decide)
	target   *url.URL
	ln       net.Listener
	hs       *http.Server
	conns    atomic.Int64
	closed   chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	events   []Event
	live     map[io.Closer]struct{}
	logMu    sync.Mutex
	closeErr error
	once     sync.Once
	tmpDir   string
}

// New starts a proxy in front of target (tcp://, tls://, unix://, ws://,
// http:// URLs) on a loopback address of the same scheme, with the faults given;
// it panics if it cannot, as httptest.NewServer does.
func New(target string, faults ...*Fault) *Proxy {
	p, err := Start("", target, Options{Faults: faults})
	if err != nil {
		panic(err)
	}
	return p
}

// Start starts a proxy listening on listen ("" for a loopback address of
// target's scheme) in front of target.
func Start(listen, target string, opts Options) (*Proxy, error) {
	tu, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("chaos: target: %w", err)
	}
	switch tu.Scheme {
	case "tcp", "tls", "unix", "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("chaos: cannot proxy to %s:// (want tcp, tls, unix, http(s) or ws(s))", tu.Scheme)
	}
	p := newProxy(opts)
	p.target = tu
	if listen == "" {
		if listen, err = p.loopback(tu); err != nil {
			return nil, err
		}
	}
	lu, err := url.Parse(listen)
	if err != nil {
		return nil, fmt.Errorf("chaos: listen: %w", err)
	}
	if err := p.listen(lu); err != nil {
		return nil, err
	}
	return p, nil
}

func newProxy(opts Options) *Proxy {
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	p := &Proxy{opts: opts, dice: newDice(opts.Seed), closed: make(chan struct{}), live: map[io.Closer]struct{}{}}
	for _, f := range opts.Faults {
		p.parse = p.parse || f.Method != "" || f.Dir != In
	}
	return p
}

func (p *Proxy) loopback(tu *url.URL) (string, error) {
	switch tu.Scheme {
	case "unix":
		dir, err := os.MkdirTemp("", "chaos")
		if err != nil {
			return "", err
		}
		p.tmpDir = dir
		return "unix://" + filepath.Join(dir, "proxy.sock"), nil
	case "tls":
		return "tcp://127.0.0.1:0/", nil
	case "https":
		return "http://127.0.0.1:0/", nil
	case "wss":
		return "ws://127.0.0.1:0/", nil
	}
	return tu.Scheme + "://127.0.0.1:0/", nil
}

func (p *Proxy) listen(lu *url.URL) error {
	network, addr := "tcp", lu.Host
	if lu.Scheme == "unix" {
		network, addr = "unix", lu.Path
		if lu.Host != "" { // unix://@name: abstract
			addr = lu.Host + lu.Path
		}
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	p.ln, p.Addr = ln, ln.Addr().String()
	u := *lu
	if network == "tcp" {
		u.Host = p.Addr
	}
	p.URL = u.String()
	switch lu.Scheme {
	case "tcp", "unix":
		p.wg.Add(1)
		go p.acceptStreams()
	case "http", "ws":
		p.serveHTTP(lu.Scheme == "ws")
	default:
		ln.Close()
		return fmt.Errorf("chaos: cannot listen on %s:// (want tcp, unix, http or ws)", lu.Scheme)
	}
	return nil
}

// Close stops the proxy and closes every connection through it.
func (p *Proxy) Close() error {
	p.once.Do(func() {
		close(p.closed)
		if p.hs != nil {
			p.closeErr = p.hs.Close()
		} else {
			p.closeErr = p.ln.Close()
		}
		p.mu.Lock()
		for c := range p.live {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
		if p.tmpDir != "" {
			os.RemoveAll(p.tmpDir)
		}
	})
	return p.closeErr
}

// track keeps c to close at Close; the returned func forgets it.
func (p *Proxy) track(c io.Closer) func() {
	p.mu.Lock()
	p.live[c] = struct{}{}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.live, c)
		p.mu.Unlock()
	}
}

// Events returns the faults injected so far.
func (p *Proxy) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// report records and logs an injected fault.
func (p *Proxy) report(e Event) {
	e.Time = time.Now()
	p.mu.Lock()
	if len(p.events) < 1<<16 {
		p.events = append(p.events, e)
	}
	p.mu.Unlock()
	if p.opts.Log == nil {
		return
	}
	var line []byte
	if p.opts.JSON {
		line, _ = json.Marshal(e)
	} else {
		line = []byte(e.String())
	}
	p.logMu.Lock()
	p.opts.Log.Write(append(line, '\n'))
	p.logMu.Unlock()
}

// decide returns the first fault that acts on msg, going in direction dir
// as message n of connection conn, and what the proxy read of msg. Messages
// are parsed only when a fault needs their method (to match it, or to
// remember the methods responses answer): with no such fault, a message no
// fault matches costs no parsing.
func (p *Proxy) decide(dir Dir, msg []byte, m *methods) (*Fault, info) {
	var in info
	parsed := false
	if p.parse {
		in, parsed = m.read(dir, msg), true
	}
	var hit *Fault
	for _, f := range p.opts.Faults {
		// Every fault counts the messages it matches (its Nth), whether
		// or not an earlier one acts.
		if f.matches(dir, in.method, p.dice) && hit == nil {
			hit = f
		}
	}
	if hit != nil && !parsed {
		in = m.read(dir, msg)
	}
	return hit, in
}

func (p *Proxy) event(f *Fault, dir Dir, in info, n, conn int64) {
	e := Event{Action: f.Action, Dir: dir.String(), Method: in.method, Msg: n, Conn: conn, Fault: f.String()}
	if len(in.ids) > 0 {
		e.ID = strings.Join(in.ids, ",")
	}
	p.report(e)
}

// sleep waits d, or less if the proxy closes; it reports whether it waited d.
func (p *Proxy) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.closed:
		return false
	}
}

var errCut = errors.New("chaos: connection cut")
