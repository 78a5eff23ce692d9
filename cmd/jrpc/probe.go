package main

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"time"
)

// After an exchange with a stream or NATS target failed without a reason
// (the connection closed, reset, or a NATS greeting never came), jrpc asks
// the port once more what it speaks, to say so instead of "crashed".

// portProtocol tells what the server at a tcp:// or nats:// target's
// address speaks: "nats" (it greets with INFO), "http" (it answers a
// JSON-RPC line with an HTTP response), "tls" (it completes a TLS
// handshake), "jsonrpc" (it answers a JSON-RPC line with JSON), or "".
func (t *target) portProtocol() string {
	if t.url == nil || (t.url.Scheme != "tcp" && t.url.Scheme != "nats") {
		return ""
	}
	addr := t.url.Host
	if t.url.Scheme == "nats" && t.url.Port() == "" {
		addr = net.JoinHostPort(t.url.Hostname(), "4222")
	}
	if kind := probeLine(addr); kind != "" {
		return kind
	}
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	if err == nil {
		c.Close()
		return "tls"
	}
	if strings.Contains(err.Error(), "tls: ") && !strings.Contains(err.Error(), "first record does not look like a TLS handshake") {
		return "tls" // it spoke TLS, and refused us (a client certificate required)
	}
	return ""
}

// probeLine reads a greeting, or sends a JSON-RPC line and reads the start
// of the answer.
func probeLine(addr string) string {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	b := make([]byte, 5)
	c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := io.ReadFull(c, b); err == nil && string(b) == "INFO " {
		return "nats"
	}
	c.SetDeadline(time.Now().Add(time.Second))
	c.Write([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"rpc.ping\",\"id\":0}\r\n\r\n"))
	n, _ := io.ReadFull(c, b)
	switch {
	case string(b[:n]) == "HTTP/":
		return "http"
	case n > 0 && bytes.ContainsAny(b[:1], "{["):
		return "jsonrpc"
	}
	return ""
}

// wrongProtocol explains a target whose port speaks another protocol than
// its URL's scheme, or returns nil.
func (t *target) wrongProtocol() error {
	if t.url == nil {
		return nil // a command: commandEnded says what it wrote
	}
	kind := t.portProtocol()
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
	}
	return nil
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
