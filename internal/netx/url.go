package netx

import (
	"context"
	"crypto/tls"
	"net"
	"net/url"
)

// UnixPath returns the socket path of unix:///path (or unix:path), or
// "@name" for the abstract socket of unix://@name (Linux).
func UnixPath(u *url.URL) string {
	if u.Opaque != "" {
		return u.Opaque
	}
	if u.User != nil {
		return u.User.String() + "@" + u.Host + u.Path
	}
	return u.Host + u.Path
}

// DialStream connects to addr by scheme: "tcp" and "unix" as those
// networks, "tls" as TCP with TLS (tlsCfg; nil: the defaults).
func DialStream(ctx context.Context, scheme, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	if scheme == "tls" {
		d := tls.Dialer{Config: tlsCfg}
		return d.DialContext(ctx, "tcp", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, scheme, addr)
}
