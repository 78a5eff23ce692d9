package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// loggedHTTP prints the HTTP exchanges of a Streamable HTTP session on
// stderr as jrpc call -v does for plain HTTP: request and status lines and
// headers (> and <), and every message as sent (-->) and received (<--),
// those of an event stream as their events arrive.
type loggedHTTP struct{ base http.RoundTripper }

func (l loggedHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	fmt.Fprintf(os.Stderr, "> %s %s %s\n> Host: %s\n", req.Method, req.URL.RequestURI(), req.Proto, req.URL.Host)
	logHeaders(">", req.Header)
	fmt.Fprintln(os.Stderr, ">")
	if len(bytes.TrimSpace(body)) > 0 {
		logWire("-->", body)
	}
	resp, err := l.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "< %s %s\n", resp.Proto, resp.Status)
	logHeaders("<", resp.Header)
	fmt.Fprintln(os.Stderr, "<")
	resp.Body = &loggedBody{ReadCloser: resp.Body, sse: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")}
	return resp, nil
}

// loggedBody prints a response body's messages as they are read: each
// data line of an event stream, or the whole body of a JSON response.
type loggedBody struct {
	io.ReadCloser
	sse  bool
	line bytes.Buffer // the part of a line read so far
}

func (b *loggedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.line.Write(p[:n])
	for {
		i := bytes.IndexByte(b.line.Bytes(), '\n')
		if i < 0 || !b.sse {
			break
		}
		line := strings.TrimRight(string(b.line.Next(i+1)), "\r\n")
		if data, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(data) != "" {
			logWire("<--", []byte(data))
		}
	}
	if err != nil && !b.sse && len(bytes.TrimSpace(b.line.Bytes())) > 0 {
		sc := bufio.NewScanner(&b.line)
		sc.Buffer(nil, b.line.Len()+1)
		for sc.Scan() {
			logWire("<--", sc.Bytes())
		}
	}
	return n, err
}
