package nats

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"strings"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/seedhq/jsonrpc"
)

func init() { jsonrpc.RegisterTransport("nats", dialURL, listenURL) }

// DefaultQueueGroup is the queue group endpoints join unless told otherwise:
// every instance serving a subject shares it, so each message goes to one.
const DefaultQueueGroup = "jsonrpc"

// DefaultCallTimeout bounds a call whose context has no deadline.
const DefaultCallTimeout = 30 * time.Second

// ErrNoResponders matches (errors.Is) the error of a call to a subject that
// no endpoint serves: the NATS server answers at once, so it comes back
// without waiting for the deadline. The error also matches
// natsgo.ErrNoResponders.
var ErrNoResponders = errors.New("jsonrpc/nats: no server serves the subject")

// ListenOptions configure an endpoint (Listen), as the fields of the
// options struct of a server transport do in package jsonrpc. The zero
// value of each is its default; a field set here wins over the URL's
// query.
type ListenOptions struct {
	// QueueGroup is the queue group the endpoint joins (default
	// DefaultQueueGroup; URL: ?queue=NAME). Endpoints on one subject in
	// different groups each receive every message.
	QueueGroup string
	// Name, Version and Description are the micro service identity of the
	// endpoint: its name (letters, digits, '-' and '_'; URL: ?name=NAME),
	// its SemVer version and a description. Empty values keep the
	// defaults: the OpenRPC info of the Server's handler if it has one,
	// else "jsonrpc" and "0.0.0".
	Name, Version, Description string
	// NATSOptions are nats.go connection options (credentials, TLS,
	// reconnect policy, ...), applied after those the URL implies.
	NATSOptions []natsgo.Option
}

// DialOption configures Dial, as jsonrpc.DialOption configures jsonrpc.Dial
// (a client's settings are functional options named WithX).
type DialOption func(*config)

type config struct {
	natsOpts       []natsgo.Option
	queue          string
	name           string
	version        string
	description    string
	tls            *tls.Config
	header         natsgo.Header
	maxMessageSize int64
	callTimeout    time.Duration
}

// apply sets the fields of o that are set on c.
func (o ListenOptions) apply(c *config) {
	c.queue = cmp.Or(o.QueueGroup, c.queue)
	c.name = cmp.Or(o.Name, c.name)
	c.version, c.description = o.Version, o.Description
	c.natsOpts = append(c.natsOpts, o.NATSOptions...)
}

// WithNATSOptions adds nats.go connection options (credentials, TLS,
// reconnect policy, ...) to a Client's: they are applied after those the
// URL implies.
func WithNATSOptions(opts ...natsgo.Option) DialOption {
	return func(c *config) { c.natsOpts = append(c.natsOpts, opts...) }
}

// WithCallTimeout bounds the calls of a Client whose context has no
// deadline (default DefaultCallTimeout; zero or less: no bound).
func WithCallTimeout(d time.Duration) DialOption { return func(c *config) { c.callTimeout = d } }

// target is a parsed nats:// URL.
type target struct {
	server  string // for nats.Connect, with user info
	public  string // the URL without secrets
	subject string
}

// parseURL reads a nats:// URL into t and the options its query implies.
func parseURL(u *url.URL, cfg *config, listen bool) (target, []natsgo.Option, error) {
	var t target
	if u.Scheme != "nats" {
		return t, nil, errors.New("jsonrpc/nats: URL scheme " + u.Scheme + " is not nats")
	}
	t.subject = strings.TrimPrefix(u.Path, "/")
	if t.subject == "" || strings.ContainsAny(t.subject, " \t\r\n/") {
		return t, nil, errors.New("jsonrpc/nats: URL " + redact(u) + " names no valid subject (nats://host:port/subject)")
	}
	if !listen && strings.ContainsAny(t.subject, "*>") {
		return t, nil, errors.New("jsonrpc/nats: cannot call the wildcard subject " + t.subject)
	}
	host := u.Host
	if host == "" {
		host = "127.0.0.1:4222"
	}
	t.server = (&url.URL{Scheme: "nats", User: u.User, Host: host}).String()
	var opts []natsgo.Option
	q := u.Query()
	var cert, key string
	public := url.Values{}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "queue", "name":
			if !listen {
				return t, nil, errors.New("jsonrpc/nats: query parameter " + k + " applies to Listen only")
			}
			if k == "queue" {
				cfg.queue = v
			} else {
				cfg.name = v
			}
			public.Set(k, v)
		case "creds":
			opts = append(opts, natsgo.UserCredentials(v))
		case "nkey":
			o, err := natsgo.NkeyOptionFromSeed(v)
			if err != nil {
				return t, nil, errors.New("jsonrpc/nats: nkey seed file: " + err.Error())
			}
			opts = append(opts, o)
		case "tls_ca":
			opts = append(opts, natsgo.RootCAs(v))
		case "tls_cert":
			cert = v
		case "tls_key":
			key = v
		default:
			return t, nil, errors.New("jsonrpc/nats: unknown query parameter " + k + " in " + redact(u) + " (want queue, name, creds, nkey, tls_ca, tls_cert, tls_key)")
		}
	}
	if (cert == "") != (key == "") {
		return t, nil, errors.New("jsonrpc/nats: tls_cert and tls_key go together")
	}
	if cert != "" {
		opts = append(opts, natsgo.ClientCert(cert, key))
	}
	pu := url.URL{Scheme: "nats", Host: host, Path: "/" + t.subject, RawQuery: public.Encode()}
	t.public = pu.String()
	return t, opts, nil
}

// redact returns u without its user info.
func redact(u *url.URL) string {
	r := *u
	r.User = nil
	return r.String()
}

// connect opens the NATS connection for t. onClosed, if not nil, runs when
// the connection has closed for good (after the callbacks of opts).
func connect(ctx context.Context, t target, cfg *config, urlOpts []natsgo.Option, name string, onClosed func(*natsgo.Conn)) (*natsgo.Conn, error) {
	o := natsgo.GetDefaultOptions()
	o.Url = t.server
	o.Name = name
	if d, ok := ctx.Deadline(); ok {
		o.Timeout = min(o.Timeout, time.Until(d))
	}
	apply := append(urlOpts, cfg.natsOpts...)
	if cfg.tls != nil {
		apply = append([]natsgo.Option{natsgo.Secure(cfg.tls)}, apply...)
	}
	for _, f := range apply {
		if err := f(&o); err != nil {
			return nil, errors.New("jsonrpc/nats: " + err.Error())
		}
	}
	if onClosed != nil {
		prev := o.ClosedCB
		o.ClosedCB = func(nc *natsgo.Conn) {
			if prev != nil {
				prev(nc)
			}
			onClosed(nc)
		}
	}
	nc, err := o.Connect()
	if err != nil {
		return nil, errors.New("jsonrpc/nats: connect to " + redactServer(t.server) + ": " + err.Error())
	}
	return nc, nil
}

func redactServer(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the NATS server"
	}
	return redact(u)
}

// newConfig returns the defaults; the URL's query and then the options
// given to Listen or Dial change them.
func newConfig() *config {
	return &config{queue: DefaultQueueGroup, callTimeout: DefaultCallTimeout}
}
