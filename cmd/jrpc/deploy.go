package main

import (
	"net/netip"
	"strings"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

// deployFlags are serve's flags for running behind a load balancer.
type deployFlags struct {
	drainDelay time.Duration
	wsPing     time.Duration
	trusted    []string
	healthPath string
}

func (f *deployFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.DurationVar(&f.drainDelay, "drain-delay", 0, "on SIGTERM, keep listening this long with /healthz answering 503 and Connection: close on every response, so a load balancer takes the instance out first")
	fl.DurationVar(&f.wsPing, "ws-ping", jsonrpc.DefaultPingInterval, "ping WebSocket clients this often (keep it under a proxy's idle timeout: nginx's proxy_read_timeout is 60s by default)")
	fl.StringArrayVar(&f.trusted, "trusted-proxy", nil, "believe X-Forwarded-For from this `CIDR` or address (e.g. 127.0.0.1): logs and rate limits see the client's address; repeatable")
	fl.StringVar(&f.healthPath, "health-path", jsonrpc.DefaultHealthPath, "answer load-balancer health checks at this path on http:// and ws:// listeners (\"-\": none)")
}

// apply sets the flags on srv and returns the listen options they need.
func (f *deployFlags) apply(srv *jsonrpc.Server) ([]jsonrpc.ListenOption, error) {
	srv.DrainDelay, srv.HealthPath = f.drainDelay, f.healthPath
	for _, p := range f.trusted {
		if !strings.Contains(p, "/") {
			a, err := netip.ParseAddr(p)
			if err != nil {
				return nil, usageErrorf("--trusted-proxy %q is not an address or CIDR prefix", p)
			}
			srv.TrustedProxies = append(srv.TrustedProxies, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			return nil, usageErrorf("--trusted-proxy %q is not an address or CIDR prefix", p)
		}
		srv.TrustedProxies = append(srv.TrustedProxies, pfx.Masked())
	}
	if f.wsPing <= 0 {
		return []jsonrpc.ListenOption{jsonrpc.ListenWebSocket(jsonrpc.WebSocketOptions{PingInterval: -1})}, nil
	}
	return []jsonrpc.ListenOption{jsonrpc.ListenWebSocket(jsonrpc.WebSocketOptions{PingInterval: f.wsPing})}, nil
}
