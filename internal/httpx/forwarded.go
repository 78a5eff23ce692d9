package httpx

import (
	"net"
	"net/netip"
	"slices"
	"strings"
)

// ClientAddr is the address of the client of a request that came from
// remote with the X-Forwarded-For header values forwarded: remote itself,
// or, when remote is one of the trusted proxies, the rightmost forwarded
// address that is not one (the client as the first trusted proxy saw it;
// entries left of it could be forged by the client). A garbled entry
// stops the walk: nothing left of it is trusted.
func ClientAddr(remote string, forwarded []string, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	if ip, err := netip.ParseAddr(host); err != nil || !isTrusted(trusted, ip) {
		return remote
	}
	client := remote
	for i := len(forwarded) - 1; i >= 0; i-- {
		parts := strings.Split(forwarded[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			ip, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client // a garbled entry: trust nothing left of it
			}
			client = ip.Unmap().String()
			if !isTrusted(trusted, ip) {
				return client
			}
		}
	}
	return client
}

func isTrusted(trusted []netip.Prefix, ip netip.Addr) bool {
	ip = ip.Unmap()
	return slices.ContainsFunc(trusted, func(p netip.Prefix) bool { return p.Contains(ip) })
}
