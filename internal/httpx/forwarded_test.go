package httpx

import (
	"net/netip"
	"testing"
)

// ClientAddr trusts X-Forwarded-For only from a trusted proxy, and then
// only up to the first address that is not one.
func TestClientAddr(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cases := []struct {
		name      string
		remote    string
		forwarded []string
		want      string
	}{
		{"not from a proxy", "192.0.2.1:5000", []string{"198.51.100.7"}, "192.0.2.1:5000"},
		{"from a proxy", "10.1.2.3:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"forged entries left of the client", "10.1.2.3:5000", []string{"203.0.113.9, 198.51.100.7"}, "198.51.100.7"},
		{"through two proxies", "10.1.2.3:5000", []string{"198.51.100.7", "10.9.9.9"}, "198.51.100.7"},
		{"only proxies", "10.1.2.3:5000", []string{"10.9.9.9"}, "10.9.9.9"},
		{"no header", "10.1.2.3:5000", nil, "10.1.2.3:5000"},
		{"garbled first", "10.1.2.3:5000", []string{"nonsense"}, "10.1.2.3:5000"},
		{"garbled behind a proxy", "10.1.2.3:5000", []string{"nonsense, 10.9.9.9"}, "10.9.9.9"},
		{"mapped IPv4", "[::ffff:10.1.2.3]:5000", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"IPv6 proxy", "[::1]:5000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"no port", "10.1.2.3", []string{"198.51.100.7"}, "198.51.100.7"},
	}
	for _, c := range cases {
		if got := ClientAddr(c.remote, c.forwarded, trusted); got != c.want {
			t.Errorf("%s: ClientAddr(%q, %q) = %q, want %q", c.name, c.remote, c.forwarded, got, c.want)
		}
	}
}
