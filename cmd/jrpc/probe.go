package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// After an exchange with a stream or NATS target failed without a reason
// (the connection closed, reset, or a NATS greeting never came), jrpc asks
// the port once more what it speaks, to say so instead of "crashed".

// portProtocol tells what the server at a tcp://, tls://, unix:// or
// nats:// target's address speaks: "nats" (it greets with INFO), "http" (it
// answers a JSON-RPC line with an HTTP response), "tls" (it completes a TLS
// handshake), "jsonrpc" (it answers a JSON-RPC line with JSON), "other"
// (it sent something else, returned as said), or "".
func (t *target) portProtocol() (kind string, said []byte) {
	if t.url == nil {
		return "", nil
	}
	network, addr := "tcp", t.url.Host
	switch t.url.Scheme {
	case "nats":
		if t.url.Port() == "" {
			addr = net.JoinHostPort(t.url.Hostname(), "4222")
		}
	case "unix":
		network, addr = "unix", unixPath(t.url)
	case "tcp", "tls":
	default:
		return "", nil
	}
	if kind, said := probeLine(t.probeDialer(network, addr)); kind != "" {
		return kind, said
	}
	if network != "tcp" || t.url.Scheme == "tls" {
		return "", nil
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		c.Close()
		return "tls", nil
	}
	if strings.Contains(err.Error(), "tls: ") && !strings.Contains(err.Error(), "first record does not look like a TLS handshake") {
		return "tls", nil // it spoke TLS, and refused us (a client certificate required)
	}
	return "", nil
}

// probeDialer dials the probe's connection: over TLS for tls:// (its
// certificate unchecked: the probe only listens to what the port says).
func (t *target) probeDialer(network, addr string) func() (net.Conn, error) {
	d := &net.Dialer{Timeout: time.Second}
	if t.url.Scheme == "tls" {
		cfg := &tls.Config{InsecureSkipVerify: true}
		if t.tls != nil {
			cfg = t.tls.Clone()
			cfg.InsecureSkipVerify = true
		}
		return func() (net.Conn, error) { return tls.DialWithDialer(d, network, addr, cfg) }
	}
	return func() (net.Conn, error) { return d.Dial(network, addr) }
}

// probeLine reads a greeting, or sends a JSON-RPC line and reads the start
// of the answer (what a server that writes something and closes wrote).
func probeLine(dial func() (net.Conn, error)) (kind string, said []byte) {
	c, err := dial()
	if err != nil {
		return "", nil
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	said = readSome(c)
	if len(said) == 0 {
		c.SetDeadline(time.Now().Add(time.Second))
		c.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"rpc.ping\",\"id\":0}\r\n\r\n"))
		said = readSome(c)
	}
	s := bytes.TrimSpace(said)
	switch {
	case len(s) == 0:
		return "", nil
	case bytes.HasPrefix(s, []byte("INFO ")):
		return "nats", said
	case bytes.HasPrefix(s, []byte("HTTP/")):
		return "http", said
	case bytes.ContainsAny(s[:1], "{["):
		return "jsonrpc", said
	}
	return "other", said
}

// probeWS sends a WebSocket target a JSON-RPC message and reads the
// first it answers (a second at most): "other" when that is not JSON.
func (t *target) probeWS() (kind string, said []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	c, _, err := websocket.Dial(ctx, t.url.String(), &websocket.DialOptions{HTTPHeader: t.headers, HTTPClient: t.httpClient()})
	if err != nil {
		return "", nil
	}
	defer c.CloseNow()
	if c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"rpc.ping","id":0}`)) != nil {
		return "", nil
	}
	_, said, err = c.Read(ctx)
	if s := bytes.TrimSpace(said); err != nil || len(s) == 0 || bytes.ContainsAny(s[:1], "{[") {
		return "", nil
	}
	return "other", said
}

// readSome reads what the peer sends until it pauses (100ms), closes, the
// deadline passes or 1 KiB came.
func readSome(c net.Conn) []byte {
	buf := make([]byte, 1024)
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		n += m
		if err != nil {
			break
		}
		if m > 0 {
			c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		}
	}
	return buf[:n]
}

// wrongProtocol explains a target whose port speaks another protocol than
// its URL's scheme, or anything but JSON-RPC, or returns nil.
func (t *target) wrongProtocol() error {
	if t.url == nil {
		return nil // a command: commandEnded says what it wrote
	}
	kind, said := t.portProtocol()
	if t.isWS() {
		kind, said = t.probeWS()
	}
	host := t.url.Host
	switch {
	case kind == "http":
		return t.notStream()
	case kind == "tls" && t.url.Scheme == "tcp":
		return transportError(fmt.Errorf("%s speaks TLS: this port wants a TLS handshake, not a plain stream", t), "tls://"+host+" (or https:// / wss:// if it serves HTTP)")
	case kind == "nats" && t.url.Scheme == "tcp":
		return transportError(fmt.Errorf("%s is a NATS server, not a JSON-RPC stream", t), "nats://"+host+"/SUBJECT, with the subject a jrpc serve --listen nats://… listens on")
	case kind == "jsonrpc" && t.url.Scheme == "nats":
		return transportError(fmt.Errorf("%s is not a NATS server: it answers JSON-RPC as a stream", t), "tcp://"+host)
	case kind == "other":
		return transportError(fmt.Errorf("%s answered %s: it does not speak JSON-RPC", t, nameAnswer(said)), "check the host and port: is a JSON-RPC server listening there?")
	}
	return nil
}

// nameAnswer names what a port that does not speak JSON-RPC sent: an HTML
// page by its title, else its first line, quoted and cut short.
func nameAnswer(said []byte) string {
	s := strings.TrimSpace(string(said))
	if strings.HasPrefix(s, "<") {
		if title := htmlTitle(s); title != "" {
			return fmt.Sprintf("with an HTML page (%q)", title)
		}
		return "with an HTML page"
	}
	line, _, _ := strings.Cut(s, "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 60 {
		line = string(r[:60]) + "…"
	}
	return fmt.Sprintf("%q", line)
}

// commandEnded explains why an --exec command's connection ended before
// the answer: the library's reader of its output says when it wrote the
// other framing or text that is not JSON-RPC.
func (t *target) commandEnded(err error) error {
	if c := t.commandConn; c != nil {
		// The call may have failed on its write as the connection closed:
		// why it closed is the connection's error.
		select {
		case <-c.Done():
			err = errors.Join(err, c.Err())
		case <-time.After(time.Second):
		}
	}
	var exitErr *exec.ExitError
	msg := err.Error()
	switch {
	case strings.Contains(msg, "writes Content-Length framed messages"):
		return transportError(fmt.Errorf("%s answers with Content-Length framed messages (LSP style), not newline-delimited JSON", t), "add --framing lsp: jrpc --framing lsp --exec …")
	case strings.Contains(msg, "writes newline-delimited JSON"):
		return transportError(fmt.Errorf("%s answers with newline-delimited JSON, not Content-Length framed messages", t), "drop --framing lsp (or give --framing line)")
	case strings.Contains(msg, "which is not"):
		i := strings.Index(msg, " wrote ")
		j := strings.Index(msg, ": is it")
		what := "text"
		if i >= 0 && j > i {
			what = msg[i+len(" wrote ") : j]
		}
		return transportError(fmt.Errorf("%s wrote %s on its standard output: it does not speak JSON-RPC there", t, what), "--exec runs a JSON-RPC server that reads requests on standard input and answers on standard output (logs go to stderr), e.g. --exec 'jrpc serve --listen stdio:'")
	case errors.As(err, &exitErr):
		return transportError(fmt.Errorf("%s exited (%v) before answering", t, exitErr), "run the command by hand to see why; its stderr is shown above")
	}
	return transportError(fmt.Errorf("%s closed its output before answering", t), "run the command by hand to see why (does it read JSON-RPC on standard input?)")
}
