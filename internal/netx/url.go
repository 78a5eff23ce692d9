package netx

import (
	"context"
	"crypto/tls"
	"errors"
	"io/fs"
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

// DialStream connects to the tcp, tls or unix URL u: "tls" is TCP with TLS
// (tlsCfg; nil: the defaults).
func DialStream(ctx context.Context, u *url.URL, tlsCfg *tls.Config) (net.Conn, error) {
	addr := u.Host
	if u.Scheme == "unix" {
		addr = UnixPath(u)
	}
	if addr == "" {
		return nil, errors.New("jsonrpc: URL " + u.String() + " names no address")
	}
	if u.Scheme == "tls" {
		return (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", addr)
	}
	return (&net.Dialer{}).DialContext(ctx, u.Scheme, addr)
}

// ListenStream listens on the tcp, tls or unix URL u and returns the
// listener with the URL clients reach it at (the actual port when u asked
// for port 0). A tls URL needs tlsBase, made a listener's configuration by
// ServerTLS; a unix socket file gets mode (see ListenUnix).
func ListenStream(u *url.URL, tlsBase *tls.Config, mode fs.FileMode) (net.Listener, string, error) {
	if u.Scheme == "unix" {
		addr := UnixPath(u)
		if addr == "" {
			return nil, "", errors.New("jsonrpc: URL " + u.String() + " names no socket")
		}
		nl, err := ListenUnix(addr, mode)
		return nl, "unix://" + addr, err
	}
	var tlsCfg *tls.Config
	if u.Scheme == "tls" {
		var err error
		if tlsCfg, err = ServerTLS(tlsBase, u.Scheme); err != nil {
			return nil, "", err
		}
	}
	nl, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, "", err
	}
	if tlsCfg != nil {
		nl = tls.NewListener(nl, tlsCfg)
	}
	return nl, u.Scheme + "://" + nl.Addr().String(), nil
}
