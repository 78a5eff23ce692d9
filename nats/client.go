package nats

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	natsgo "github.com/nats-io/nats.go"
	"github.com/seedhq/jsonrpc"
)

// Client calls the endpoints serving one subject. It is a jsonrpc.Client
// (Call, Notify, Batch, Close) and is safe for concurrent use.
type Client struct {
	jsonrpc.Client
	nc      *natsgo.Conn
	subject string
}

// Dial connects to the NATS server of rawURL (nats://host:port/subject, see
// the package documentation) and returns a Client for its subject. ctx
// bounds the connection only.
func Dial(ctx context.Context, rawURL string, opts ...DialOption) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("jsonrpc/nats: invalid URL: " + err.Error())
	}
	return dial(ctx, u, jsonrpc.DialSettings{}, opts)
}

// dialURL is the DialFunc registered for nats://.
func dialURL(ctx context.Context, u *url.URL, set jsonrpc.DialSettings) (jsonrpc.Client, error) {
	c, err := dial(ctx, u, set, nil)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func dial(ctx context.Context, u *url.URL, set jsonrpc.DialSettings, opts []DialOption) (*Client, error) {
	cfg := newConfig()
	t, urlOpts, err := parseURL(u, cfg, false)
	if err != nil {
		return nil, err
	}
	cfg.tls, cfg.maxMessageSize = set.TLSConfig, set.MaxMessageSize
	if len(set.Header) > 0 {
		cfg.header = natsgo.Header(set.Header)
	}
	for _, o := range opts {
		o(cfg)
	}
	nc, err := connect(ctx, t, cfg, urlOpts, "jsonrpc client "+t.subject, nil)
	if err != nil {
		return nil, err
	}
	c := &Client{nc: nc, subject: t.subject}
	timeout, header := cfg.callTimeout, cfg.header
	exchange := func(ctx context.Context, msg []byte, _ bool) ([]byte, error) {
		if _, ok := ctx.Deadline(); !ok && timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		reply, err := nc.RequestMsgWithContext(ctx, &natsgo.Msg{Subject: c.subject, Data: msg, Header: header})
		if err != nil {
			if errors.Is(err, natsgo.ErrNoResponders) {
				return nil, fmt.Errorf("%w %q (%w)", ErrNoResponders, c.subject, err)
			}
			return nil, fmt.Errorf("jsonrpc/nats: request on %q: %w", c.subject, err)
		}
		return reply.Data, nil
	}
	c.Client = jsonrpc.NewMessageClient(exchange, jsonrpc.WithMaxMessageSize(cfg.maxMessageSize))
	return c, nil
}

// Close fails the calls still waiting and closes the NATS connection.
func (c *Client) Close() error {
	c.Client.Close()
	c.nc.Close()
	return nil
}

// Conn returns the client's NATS connection (to read its statistics, say).
func (c *Client) Conn() *natsgo.Conn { return c.nc }
