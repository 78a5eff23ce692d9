package nats

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/seedhq/jsonrpc"
)

// Endpoint serves a jsonrpc.Server on a NATS subject as a member of a queue
// group, and as a micro service instance. It implements jsonrpc.Endpoint.
type Endpoint struct {
	srv     *jsonrpc.Server
	nc      *natsgo.Conn
	svc     micro.Service
	url     string
	subject string
	log     *slog.Logger

	ctx    context.Context // the handlers' context, cancelled when Shutdown gives up
	cancel context.CancelFunc
	sem    chan struct{} // one token per message being served
	busy   sync.WaitGroup

	shutdown atomic.Bool
	done     chan struct{}
	once     sync.Once
	err      error

	errors        atomic.Int64
	notifications atomic.Int64
	handlerNanos  atomic.Int64
	served        atomic.Int64
}

// StatsData is the data member of the endpoint's $SRV.STATS entry: the
// JSON-RPC view of the traffic, beside micro's own counters.
type StatsData struct {
	ErrorResponses     int64         `json:"error_responses"` // single responses carrying an error object
	Notifications      int64         `json:"notifications"`   // messages that needed no response
	InFlight           int           `json:"in_flight"`       // messages being served now
	HandlerTime        time.Duration `json:"handler_time"`    // total time in Server.Process
	AverageHandlerTime time.Duration `json:"average_handler_time"`
	MaxConcurrency     int           `json:"max_concurrency"`
	Draining           bool          `json:"draining"`
	JSONRPCSubject     string        `json:"subject"`
	JSONRPCProtocol    string        `json:"protocol"`
}

// Listen serves srv on the subject of rawURL (see the package documentation)
// until srv.Shutdown, which drains the endpoint. It is srv.Listen with
// options.
func Listen(srv *jsonrpc.Server, rawURL string, opts ListenOptions) (*jsonrpc.Listener, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("jsonrpc/nats: invalid URL: " + err.Error())
	}
	ep, err := listen(srv, u, opts)
	if err != nil {
		return nil, err
	}
	return srv.ServeEndpoint(ep), nil
}

// listenURL is the ListenFunc registered for nats://.
func listenURL(srv *jsonrpc.Server, u *url.URL) (jsonrpc.Endpoint, error) {
	ep, err := listen(srv, u, ListenOptions{})
	if err != nil {
		return nil, err
	}
	return ep, nil
}

var (
	nameRegexp   = regexp.MustCompile(`^[A-Za-z0-9\-_]+$`)
	semverRegexp = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
	notNameChars = regexp.MustCompile(`[^A-Za-z0-9\-_]+`)
)

func listen(srv *jsonrpc.Server, u *url.URL, opts ListenOptions) (*Endpoint, error) {
	cfg := newConfig()
	t, urlOpts, err := parseURL(u, cfg, true)
	if err != nil {
		return nil, err
	}
	opts.apply(cfg)
	name, version, description := serviceInfo(srv, cfg)
	if !nameRegexp.MatchString(name) {
		return nil, errors.New("jsonrpc/nats: service name " + name + " may hold only letters, digits, '-' and '_'")
	}
	if !semverRegexp.MatchString(version) {
		return nil, errors.New("jsonrpc/nats: service version " + version + " is not a SemVer version")
	}
	concurrency := srv.MaxConcurrency
	if concurrency <= 0 {
		concurrency = jsonrpc.DefaultMaxConcurrency
	}
	e := &Endpoint{srv: srv, url: t.public, subject: t.subject, log: cmp.Or(srv.Logger, slog.Default()), sem: make(chan struct{}, concurrency), done: make(chan struct{})}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	// A server reconnects for ever: a NATS server restart must not end it.
	urlOpts = append([]natsgo.Option{natsgo.MaxReconnects(-1)}, urlOpts...)
	e.nc, err = connect(context.Background(), t, cfg, urlOpts, name+" "+t.subject, func(nc *natsgo.Conn) {
		if !e.shutdown.Load() {
			err := nc.LastError()
			if err == nil {
				err = natsgo.ErrConnectionClosed
			}
			e.stop(errors.New("jsonrpc/nats: connection to the NATS server closed: " + err.Error()))
		}
	})
	if err != nil {
		return nil, err
	}
	e.svc, err = micro.AddService(e.nc, micro.Config{
		Name:         name,
		Version:      version,
		Description:  description,
		QueueGroup:   cfg.queue,
		Metadata:     map[string]string{"protocol": "jsonrpc-2.0"},
		StatsHandler: func(*micro.Endpoint) any { return e.statsData() },
		ErrorHandler: func(_ micro.Service, err *micro.NATSError) {
			e.log.Warn("jsonrpc/nats: subscription error", "subject", err.Subject, "error", err.Description)
		},
	})
	if err == nil {
		err = e.svc.AddEndpoint("jsonrpc", micro.HandlerFunc(e.handle), micro.WithEndpointSubject(t.subject),
			micro.WithEndpointQueueGroup(cfg.queue), micro.WithEndpointMetadata(map[string]string{"protocol": "jsonrpc-2.0"}))
	}
	if err == nil {
		// Once the NATS server has answered a ping it has the subscriptions:
		// a call made after Listen returns reaches this endpoint.
		err = e.nc.FlushTimeout(10 * time.Second)
	}
	if err != nil {
		e.shutdown.Store(true)
		e.nc.Close()
		return nil, errors.New("jsonrpc/nats: " + err.Error())
	}
	return e, nil
}

// serviceInfo picks the micro identity: the options, else the OpenRPC info
// the handler serves with rpc.discover, else defaults.
func serviceInfo(srv *jsonrpc.Server, cfg *config) (name, version, description string) {
	name, version, description = cfg.name, cfg.version, cfg.description
	if name == "" || version == "" || description == "" {
		reply := srv.Process(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"rpc.discover"}`))
		var doc struct {
			Result struct {
				Info struct{ Title, Version, Description string }
			}
		}
		if json.Unmarshal(reply, &doc) == nil {
			info := doc.Result.Info
			if name == "" {
				name = strings.Trim(notNameChars.ReplaceAllString(info.Title, "-"), "-")
			}
			if version == "" && semverRegexp.MatchString(info.Version) {
				version = info.Version
			}
			description = cmp.Or(description, info.Description)
		}
	}
	return cmp.Or(name, "jsonrpc"), cmp.Or(version, "0.0.0"), description
}

// handle takes one message from the subscription: it waits for a free
// slot (so that a busy endpoint leaves messages in NATS's pending queue)
// and serves the message on a goroutine of its own. The slot is taken
// before handle returns, which is what lets Shutdown know, once the
// subscription has drained, that every delivered message is accounted for.
func (e *Endpoint) handle(req micro.Request) {
	e.sem <- struct{}{}
	e.busy.Add(1)
	data, reply := req.Data(), req.Reply()
	go func() {
		defer func() { <-e.sem; e.busy.Done() }()
		start := time.Now()
		out := e.srv.Process(e.ctx, data)
		e.handlerNanos.Add(int64(time.Since(start)))
		e.served.Add(1)
		if out == nil {
			e.notifications.Add(1)
		} else if isErrorResponse(out) {
			e.errors.Add(1)
		}
		if reply == "" {
			return // no reply subject: nowhere to answer, even an error
		}
		if out == nil {
			out = []byte{} // a notification sent as a request: acknowledge it
		}
		if int64(len(out)) > e.nc.MaxPayload() {
			e.log.Warn("jsonrpc/nats: reply over the NATS server's max_payload", "subject", e.subject, "bytes", len(out), "max_payload", e.nc.MaxPayload())
			out = errReplyTooLarge
		}
		if err := req.Respond(out); err != nil {
			e.log.Warn("jsonrpc/nats: reply not sent", "subject", e.subject, "error", err)
		}
	}()
}

// errReplyTooLarge replaces a reply the NATS server would refuse. Its id is
// null: a batch's reply has no one id, and the caller waits on this message
// alone, so it gets the error either way.
var errReplyTooLarge = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error: the reply is over the NATS server's max_payload"}}`)

// isErrorResponse reports whether a reply is one response carrying an
// error object ({"jsonrpc":"2.0","id":ID,"error":…}, as the Server writes it).
func isErrorResponse(b []byte) bool {
	const head = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return false
	}
	rest := b[len(head):]
	if len(rest) > 0 && rest[0] == '"' {
		i := 1
		for i < len(rest) && rest[i] != '"' {
			if rest[i] == '\\' {
				i++
			}
			i++
		}
		rest = rest[min(i+1, len(rest)):]
	} else if i := bytes.IndexByte(rest, ','); i >= 0 {
		rest = rest[i:]
	}
	return bytes.HasPrefix(rest, []byte(`,"error":`))
}

func (e *Endpoint) statsData() StatsData {
	d := StatsData{
		ErrorResponses:  e.errors.Load(),
		Notifications:   e.notifications.Load(),
		InFlight:        len(e.sem),
		HandlerTime:     time.Duration(e.handlerNanos.Load()),
		MaxConcurrency:  cap(e.sem),
		Draining:        e.shutdown.Load(),
		JSONRPCSubject:  e.subject,
		JSONRPCProtocol: "jsonrpc-2.0",
	}
	if n := e.served.Load(); n > 0 {
		d.AverageHandlerTime = d.HandlerTime / time.Duration(n)
	}
	return d
}

// URL returns where clients reach the endpoint, without credentials.
func (e *Endpoint) URL() string { return e.url }

// Service returns the endpoint's micro service (for Info and Stats).
func (e *Endpoint) Service() micro.Service { return e.svc }

// Shutdown drains the endpoint: it unsubscribes (with the $SRV
// subscriptions, so the instance leaves discovery too), serves the
// messages already received, publishes their replies and closes the
// connection. If ctx ends first, running handlers are cancelled and the
// connection closes at once; ctx's error is returned.
func (e *Endpoint) Shutdown(ctx context.Context) error {
	if e.shutdown.Swap(true) {
		<-e.done
		return nil
	}
	err := e.svc.Stop() // drains: every delivered message reaches handle
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for e.nc.NumSubscriptions() > 0 && ctx.Err() == nil && !e.nc.IsClosed() {
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	idle := make(chan struct{})
	go func() { e.busy.Wait(); close(idle) }()
	select {
	case <-idle:
		if ferr := e.nc.FlushWithContext(ctx); ferr != nil && !errors.Is(ferr, natsgo.ErrConnectionClosed) {
			err = errors.Join(err, ferr)
		}
	case <-ctx.Done():
		e.cancel()
	}
	e.nc.Close()
	e.cancel()
	e.stop(nil)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Wait blocks until the endpoint has stopped: nil after Shutdown, or why the
// NATS connection closed for good.
func (e *Endpoint) Wait() error {
	<-e.done
	return e.err
}

func (e *Endpoint) stop(err error) {
	e.once.Do(func() {
		e.err = err
		close(e.done)
	})
}
