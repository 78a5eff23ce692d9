package netx

import (
	"crypto/tls"
	"net/url"
	"strings"
	"testing"
)

func TestServerTLS(t *testing.T) {
	if _, err := ServerTLS(nil, "https"); err == nil || !strings.Contains(err.Error(), "ListenTLS") {
		t.Errorf("no configuration: %v", err)
	}
	if _, err := ServerTLS(&tls.Config{}, "wss"); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("no certificate: %v", err)
	}
	base := &tls.Config{MinVersion: tls.VersionTLS10, GetCertificate: getCert}
	cfg, err := ServerTLS(base, "https", "h2", "http/1.1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg == base || cfg.MinVersion != tls.VersionTLS12 || strings.Join(cfg.NextProtos, ",") != "h2,http/1.1" {
		t.Errorf("got MinVersion %x, NextProtos %v (a clone: %v)", cfg.MinVersion, cfg.NextProtos, cfg != base)
	}
	if base.MinVersion != tls.VersionTLS10 {
		t.Error("the base configuration was modified")
	}
	cfg, _ = ServerTLS(&tls.Config{MinVersion: tls.VersionTLS13, GetCertificate: getCert, NextProtos: []string{"x"}}, "tls", "h2")
	if cfg.MinVersion != tls.VersionTLS13 || strings.Join(cfg.NextProtos, ",") != "x" {
		t.Errorf("kept settings lost: %x %v", cfg.MinVersion, cfg.NextProtos)
	}
}

func getCert(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, nil }

func TestUnixPath(t *testing.T) {
	for raw, want := range map[string]string{
		"unix:///tmp/a.sock": "/tmp/a.sock",
		"unix:rel/a.sock":    "rel/a.sock",
		"unix://@name":       "@name",
		"unix://@name/x":     "@name/x",
		"unix://":            "",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := UnixPath(u); got != want {
			t.Errorf("UnixPath(%s) = %q, want %q", raw, got, want)
		}
	}
}

func TestListenStream(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ raw, prefix string }{
		{"tcp://127.0.0.1:0", "tcp://127.0.0.1:"},
		{"tls://127.0.0.1:0", "tls://127.0.0.1:"},
		{"unix://" + dir + "/s.sock", "unix://" + dir + "/s.sock"},
	} {
		u, _ := url.Parse(tc.raw)
		l, public, err := ListenStream(u, &tls.Config{GetCertificate: getCert}, 0o600)
		if err != nil {
			t.Fatalf("%s: %v", tc.raw, err)
		}
		if !strings.HasPrefix(public, tc.prefix) || strings.HasSuffix(public, ":0") {
			t.Errorf("%s: URL %q", tc.raw, public)
		}
		if pu, _ := url.Parse(public); pu.Scheme != "tls" { // the listener has no certificate
			nc, err := DialStream(t.Context(), pu, nil)
			if err != nil {
				t.Errorf("dial %s: %v", public, err)
			} else {
				nc.Close()
			}
		}
		l.Close()
	}
	u, _ := url.Parse("unix://")
	if _, _, err := ListenStream(u, nil, 0o600); err == nil || !strings.Contains(err.Error(), "names no socket") {
		t.Errorf("unix:// with no path: %v", err)
	}
	u, _ = url.Parse("tls://127.0.0.1:0")
	if _, _, err := ListenStream(u, &tls.Config{}, 0o600); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("tls:// without a certificate: %v", err)
	}
	for _, raw := range []string{"unix://", "tcp://", "tls:///x"} {
		u, _ := url.Parse(raw)
		if _, err := DialStream(t.Context(), u, nil); err == nil || !strings.Contains(err.Error(), "names no address") {
			t.Errorf("dial %s: %v", raw, err)
		}
	}
}
