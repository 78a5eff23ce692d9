package otel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/seedhq/jsonrpc"
	jsonrpcotel "github.com/seedhq/jsonrpc/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type subParams struct {
	Minuend    float64 `json:"minuend"`
	Subtrahend float64 `json:"subtrahend"`
}

// rig is a server instrumented with an in-memory span recorder and a
// manual metric reader.
type rig struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
	srv    *jsonrpc.Server
	url    string
}

func newRig(t *testing.T, scheme string, opts ...jsonrpcotel.Option) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	mux := jsonrpc.NewMux()
	jsonrpc.Register(mux, "subtract", func(ctx context.Context, p subParams) (float64, error) {
		return p.Minuend - p.Subtrahend, nil
	})
	// traced takes _meta along with its params, and tells the span it runs in.
	mux.HandleFunc("traced", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		sc := trace.SpanContextFromContext(ctx)
		return sc.TraceID().String() + "/" + sc.SpanID().String(), nil
	})
	r.srv = &jsonrpc.Server{Handler: mux}
	jsonrpcotel.Instrument(r.srv, append([]jsonrpcotel.Option{
		jsonrpcotel.WithTracerProvider(r.tp),
		jsonrpcotel.WithMeterProvider(r.mp),
		jsonrpcotel.WithPropagators(propagation.TraceContext{}),
	}, opts...)...)
	l, err := r.srv.Listen(scheme + "://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.url = l.URL
	t.Cleanup(func() { r.srv.Shutdown(context.Background()) })
	return r
}

// sender sends raw messages to a server and returns the reply ("" for none).
type sender func(msg string, header http.Header) string

func newSender(t *testing.T, r *rig) sender {
	t.Helper()
	if strings.HasPrefix(r.url, "http") {
		return func(msg string, header http.Header) string {
			req, _ := http.NewRequest("POST", r.url, strings.NewReader(msg))
			for k, v := range header {
				req.Header[k] = v
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return string(b)
		}
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(r.url, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	br := bufio.NewReader(nc)
	return func(msg string, _ http.Header) string {
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintln(nc, msg)
		if !strings.Contains(msg, `"id"`) {
			return ""
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(line)
	}
}

// waitSpans waits (at most 5 s) until n spans have ended and returns them.
func (r *rig) waitSpans(t *testing.T, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if got := r.spans.Ended(); len(got) >= n {
			if len(got) > n {
				t.Fatalf("%d spans, want %d", len(got), n)
			}
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d spans after 5 s, want %d", len(r.spans.Ended()), n)
		}
	}
}

// attrMap renders attributes as key=value strings, sorted, with the peer
// port (which varies) replaced by "PORT".
func attrMap(attrs []attribute.KeyValue) []string {
	var out []string
	for _, a := range attrs {
		v := a.Value.String()
		if a.Key == "network.peer.port" {
			if a.Value.AsInt64() <= 0 {
				v = "BAD"
			} else {
				v = "PORT"
			}
		}
		out = append(out, string(a.Key)+"="+v)
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string { sort.Strings(s); return s }

// The exact attribute set of each outcome, on TCP and on HTTP.
func TestServerSpansExactAttributes(t *testing.T) {
	peer := []string{"network.peer.address=127.0.0.1", "network.peer.port=PORT"}
	base := append([]string{"rpc.system.name=jsonrpc", "jsonrpc.protocol.version=2.0"}, peer...)
	cases := []struct {
		name, msg   string
		spanName    string
		attrs       []string
		status      codes.Code
		description string
	}{
		{"success", `{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":1}`, "subtract",
			[]string{"rpc.method=subtract", "jsonrpc.request.id=1"}, codes.Unset, ""},
		{"invalid params", `{"jsonrpc":"2.0","method":"subtract","params":{"minuend":"x","subtrahend":1},"id":"req-7"}`, "subtract",
			[]string{"rpc.method=subtract", "jsonrpc.request.id=req-7", "rpc.response.status_code=-32602", "error.type=-32602"}, codes.Error, "invalid params: /minuend: expected number, got string"},
		{"method not found", `{"jsonrpc":"2.0","method":"nope","id":3}`, "jsonrpc",
			[]string{"rpc.method=_OTHER", "rpc.method_original=nope", "jsonrpc.request.id=3", "rpc.response.status_code=-32601", "error.type=-32601"}, codes.Error, "method not found: nope"},
		{"notification", `{"jsonrpc":"2.0","method":"subtract","params":[1,2]}`, "subtract",
			[]string{"rpc.method=subtract"}, codes.Unset, ""},
		{"null id", `{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":null}`, "subtract",
			[]string{"rpc.method=subtract"}, codes.Unset, ""},
	}
	for _, scheme := range []string{"tcp", "http"} {
		t.Run(scheme, func(t *testing.T) {
			r := newRig(t, scheme)
			send := newSender(t, r)
			for _, c := range cases {
				r.spans.Reset()
				send(c.msg, nil)
				s := r.waitSpans(t, 1)[0]
				if s.Name() != c.spanName || s.SpanKind() != trace.SpanKindServer {
					t.Errorf("%s: span %q kind %v", c.name, s.Name(), s.SpanKind())
				}
				want := sorted(append(slices.Clone(base), c.attrs...)...)
				if got := attrMap(s.Attributes()); !slices.Equal(got, want) {
					t.Errorf("%s attributes:\n got %v\nwant %v", c.name, got, want)
				}
				if s.Status().Code != c.status || s.Status().Description != c.description {
					t.Errorf("%s: status %v %q", c.name, s.Status().Code, s.Status().Description)
				}
				if s.Parent().IsValid() {
					t.Errorf("%s: parent %v without any trace context sent", c.name, s.Parent())
				}
			}

			// A batch: one span per element, each with its own attributes.
			r.spans.Reset()
			send(`[{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":10},{"jsonrpc":"2.0","method":"subtract","params":[1,1]},{"jsonrpc":"2.0","method":"nope","id":11}]`, nil)
			spans := r.waitSpans(t, 3)
			var got []string
			for _, s := range spans {
				got = append(got, s.Name()+" "+strings.Join(attrMap(s.Attributes()), ","))
			}
			sort.Strings(got)
			want := []string{
				"jsonrpc " + strings.Join(sorted(append(slices.Clone(base), "rpc.method=_OTHER", "rpc.method_original=nope", "jsonrpc.request.id=11", "rpc.response.status_code=-32601", "error.type=-32601")...), ","),
				"subtract " + strings.Join(sorted(append(slices.Clone(base), "rpc.method=subtract")...), ","),
				"subtract " + strings.Join(sorted(append(slices.Clone(base), "rpc.method=subtract", "jsonrpc.request.id=10")...), ","),
			}
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("batch spans:\n got %q\nwant %q", got, want)
			}

			// The duration histogram: seconds, the advised buckets, one series
			// per method and outcome, without per-request attributes.
			series := r.durationSeries(t, "rpc.server.call.duration")
			wantSeries := map[string]uint64{
				"rpc.method=subtract,rpc.system.name=jsonrpc":                                                   5, // success, notification, null id, two batch elements
				"error.type=-32602,rpc.method=subtract,rpc.response.status_code=-32602,rpc.system.name=jsonrpc": 1,
				"error.type=-32601,rpc.method=_OTHER,rpc.response.status_code=-32601,rpc.system.name=jsonrpc":   2,
			}
			if fmt.Sprint(series) != fmt.Sprint(wantSeries) {
				t.Errorf("series:\n got %v\nwant %v", series, wantSeries)
			}
		})
	}
}

// durationSeries collects the histogram and returns each series' count,
// keyed by its attributes; it checks the unit and the bucket boundaries.
func (r *rig) durationSeries(t *testing.T, name string) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			found = true
			if m.Unit != "s" {
				t.Errorf("%s unit %q", name, m.Unit)
			}
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok {
				t.Fatalf("%s is %T", name, m.Data)
			}
			for _, dp := range h.DataPoints {
				if !slices.Equal(dp.Bounds, jsonrpcotel.DurationBuckets) {
					t.Errorf("bounds %v", dp.Bounds)
				}
				out[strings.Join(attrMap(dp.Attributes.ToSlice()), ",")] = dp.Count
			}
		}
	}
	if !found {
		t.Fatalf("no %s metric", name)
	}
	return out
}

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + remoteTrace + "-" + remoteSpan + "-01"
	metaTrace   = "0af7651916cd43dd8448eb211c80319c"
	metaSpan    = "b7ad6b7169203331"
)

// The parent span comes from the HTTP header, and from params._meta on any
// transport; with both, _meta is the parent and the header a link.
func TestServerParentFromHeaderAndMeta(t *testing.T) {
	meta := `"_meta":{"traceparent":"00-` + metaTrace + `-` + metaSpan + `-01"}`
	for _, c := range []struct {
		scheme, params      string
		header              bool
		parentTrace, parent string
		link                string
	}{
		{"http", `{"x":1}`, true, remoteTrace, remoteSpan, ""},
		{"tcp", `{` + meta + `}`, false, metaTrace, metaSpan, ""},
		{"http", `{"x":1,` + meta + `}`, false, metaTrace, metaSpan, ""},
		{"http", `{` + meta + `}`, true, metaTrace, metaSpan, remoteTrace + "/" + remoteSpan},
	} {
		r := newRig(t, c.scheme)
		send := newSender(t, r)
		h := http.Header{}
		if c.header {
			h.Set("traceparent", traceparent)
		}
		reply := send(`{"jsonrpc":"2.0","method":"traced","params":`+c.params+`,"id":1}`, h)
		s := r.waitSpans(t, 1)[0]
		p := s.Parent()
		if p.TraceID().String() != c.parentTrace || p.SpanID().String() != c.parent || !p.IsRemote() {
			t.Errorf("%s %s: parent %v", c.scheme, c.params, p)
		}
		// The handler runs inside the server span.
		if want := s.SpanContext().TraceID().String() + "/" + s.SpanContext().SpanID().String(); !strings.Contains(reply, want) {
			t.Errorf("handler saw %s, span is %s", reply, want)
		}
		var links []string
		for _, l := range s.Links() {
			links = append(links, l.SpanContext.TraceID().String()+"/"+l.SpanContext.SpanID().String())
		}
		if strings.Join(links, " ") != c.link {
			t.Errorf("%s %s: links %v, want %q", c.scheme, c.params, links, c.link)
		}
	}
}

// On WebSocket, the handshake's traceparent is the parent of the spans of
// every request on the socket.
func TestServerParentFromWebSocketHandshake(t *testing.T) {
	r := newRig(t, "ws")
	c, err := jsonrpc.Dial(context.Background(), r.url, jsonrpc.WithHeader("traceparent", traceparent))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		if err := c.Call(context.Background(), "traced", map[string]int{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range r.waitSpans(t, 2) {
		if p := s.Parent(); p.TraceID().String() != remoteTrace || p.SpanID().String() != remoteSpan || !p.IsRemote() {
			t.Errorf("parent %v", p)
		}
		if got := attrMap(s.Attributes()); !slices.Contains(got, "network.peer.address=127.0.0.1") {
			t.Errorf("attributes %v", got)
		}
	}
}

// A batch over HTTP: each element's span is a child of the message's
// header context, or of its own _meta, linked then to the message.
func TestServerBatchParentsAndLinks(t *testing.T) {
	r := newRig(t, "http")
	send := newSender(t, r)
	h := http.Header{}
	h.Set("traceparent", traceparent)
	send(`[{"jsonrpc":"2.0","method":"traced","params":{},"id":1},`+
		`{"jsonrpc":"2.0","method":"traced","params":{"_meta":{"traceparent":"00-`+metaTrace+`-`+metaSpan+`-01"}},"id":2}]`, h)
	got := map[string]string{}
	for _, s := range r.waitSpans(t, 2) {
		var id string
		for _, a := range s.Attributes() {
			if a.Key == "jsonrpc.request.id" {
				id = a.Value.AsString()
			}
		}
		links := ""
		for _, l := range s.Links() {
			links += " link " + l.SpanContext.SpanID().String()
		}
		got[id] = s.Parent().TraceID().String() + "/" + s.Parent().SpanID().String() + links
	}
	want := map[string]string{
		"1": remoteTrace + "/" + remoteSpan,
		"2": metaTrace + "/" + metaSpan + " link " + remoteSpan,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batch spans:\n got %v\nwant %v", got, want)
	}
}

// A peer sending random method names creates no series of its own.
func TestCardinalityBounded(t *testing.T) {
	r := newRig(t, "tcp")
	c, err := jsonrpc.Dial(context.Background(), r.url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b jsonrpc.Batch
	for i := range 10000 {
		b.Call(fmt.Sprintf("random-%d-%x", i, i*7919), nil, nil)
		if b.Len() == 1000 {
			if err := c.Batch(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			b = jsonrpc.Batch{}
		}
	}
	c.Call(context.Background(), "subtract", []int{2, 1}, nil)
	series := r.durationSeries(t, "rpc.server.call.duration")
	if len(series) != 2 || series["error.type=-32601,rpc.method=_OTHER,rpc.response.status_code=-32601,rpc.system.name=jsonrpc"] != 10000 {
		t.Errorf("%d series: %v", len(series), series)
	}
}

// The client: a CLIENT span per call, its context sent in the HTTP header
// (and in _meta when asked), and the server's span its child.
func TestClientSpansAndPropagation(t *testing.T) {
	for _, c := range []struct {
		scheme string
		meta   bool
	}{{"http", false}, {"tcp", true}, {"ws", true}} {
		r := newRig(t, c.scheme)
		conn, err := jsonrpc.Dial(context.Background(), r.url)
		if err != nil {
			t.Fatal(err)
		}
		opts := []jsonrpcotel.Option{
			jsonrpcotel.WithTracerProvider(r.tp), jsonrpcotel.WithMeterProvider(r.mp),
			jsonrpcotel.WithPropagators(propagation.TraceContext{}),
			jsonrpcotel.WithServerAddress(r.url),
		}
		if c.meta {
			opts = append(opts, jsonrpcotel.WithParamsMeta())
		}
		client := jsonrpcotel.NewClient(conn, opts...)
		var seen string
		if err := client.Call(context.Background(), "traced", map[string]int{"x": 1}, &seen); err != nil {
			t.Fatal(err)
		}
		err = client.Call(context.Background(), "nope", nil, nil)
		if jsonrpc.CodeOf(err) != jsonrpc.CodeMethodNotFound {
			t.Fatalf("nope: %v", err)
		}
		client.Close()
		spans := r.waitSpans(t, 4)
		var clientSpan, serverSpan, failed sdktrace.ReadOnlySpan
		for _, s := range spans {
			switch {
			case s.SpanKind() == trace.SpanKindClient && s.Name() == "traced":
				clientSpan = s
			case s.SpanKind() == trace.SpanKindServer && s.Name() == "traced":
				serverSpan = s
			case s.SpanKind() == trace.SpanKindClient && s.Name() == "nope":
				failed = s
			}
		}
		if clientSpan == nil || serverSpan == nil || failed == nil {
			t.Fatalf("%s: spans %v", c.scheme, spans)
		}
		if serverSpan.Parent().SpanID() != clientSpan.SpanContext().SpanID() || serverSpan.SpanContext().TraceID() != clientSpan.SpanContext().TraceID() {
			t.Errorf("%s: server span's parent %v, client span %v", c.scheme, serverSpan.Parent(), clientSpan.SpanContext())
		}
		host, port, _ := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(r.url, "tcp://"), "http://"), "ws://"))
		host = strings.TrimSuffix(host, "/")
		port = strings.TrimSuffix(port, "/")
		wantAttrs := sorted("rpc.system.name=jsonrpc", "rpc.method=traced", "jsonrpc.protocol.version=2.0", "server.address="+host, "server.port="+port)
		if got := attrMap(clientSpan.Attributes()); !slices.Equal(got, wantAttrs) {
			t.Errorf("%s client attributes:\n got %v\nwant %v", c.scheme, got, wantAttrs)
		}
		wantFailed := sorted("rpc.system.name=jsonrpc", "rpc.method=nope", "jsonrpc.protocol.version=2.0", "server.address="+host, "server.port="+port, "rpc.response.status_code=-32601", "error.type=-32601")
		if got := attrMap(failed.Attributes()); !slices.Equal(got, wantFailed) || failed.Status().Code != codes.Error {
			t.Errorf("%s failed call attributes:\n got %v\nwant %v (status %v)", c.scheme, got, wantFailed, failed.Status())
		}
		series := r.durationSeries(t, "rpc.client.call.duration")
		if len(series) != 2 {
			t.Errorf("%s client series %v", c.scheme, series)
		}
	}
}

// With rpc/dup, the attributes and metric of the earlier conventions come too.
func TestStabilityOptInDup(t *testing.T) {
	t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http,rpc/dup")
	r := newRig(t, "tcp")
	send := newSender(t, r)
	send(`{"jsonrpc":"2.0","method":"subtract","params":{"minuend":"x"},"id":"a"}`, nil)
	s := r.waitSpans(t, 1)[0]
	got := strings.Join(attrMap(s.Attributes()), " ")
	for _, w := range []string{"rpc.system=jsonrpc", "rpc.system.name=jsonrpc", "rpc.jsonrpc.version=2.0", "rpc.jsonrpc.request_id=a", "rpc.jsonrpc.error_code=-32602", "rpc.response.status_code=-32602"} {
		if !strings.Contains(got, w) {
			t.Errorf("attributes %s lack %s", got, w)
		}
	}
	var rm metricdata.ResourceMetrics
	r.reader.Collect(context.Background(), &rm)
	var names []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names = append(names, m.Name+"["+m.Unit+"]")
		}
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "rpc.server.call.duration[s] rpc.server.duration[ms]" {
		t.Errorf("metrics %v", names)
	}
}

func TestMetaParamsInjection(t *testing.T) {
	// Checked through the wire: a server handler sees the _meta the client added.
	mux := jsonrpc.NewMux()
	mux.HandleFunc("show", func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		return json.RawMessage(req.Params), nil
	})
	srv := &jsonrpc.Server{Handler: mux}
	l, err := srv.Listen("tcp://127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	conn, err := jsonrpc.Dial(context.Background(), l.URL)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	client := jsonrpcotel.NewClient(conn, jsonrpcotel.WithTracerProvider(tp), jsonrpcotel.WithPropagators(propagation.TraceContext{}), jsonrpcotel.WithParamsMeta())
	defer client.Close()
	for _, params := range []any{nil, map[string]any{"a": 1}, json.RawMessage(`{"a":1,"_meta":{"progressToken":5}}`), subParams{1, 2}, []int{1, 2}} {
		var got map[string]any
		var arr []int
		var err error
		if _, ok := params.([]int); ok {
			err = client.Call(context.Background(), "show", params, &arr)
		} else {
			err = client.Call(context.Background(), "show", params, &got)
		}
		if err != nil {
			t.Fatalf("%v: %v", params, err)
		}
		if arr != nil {
			if !slices.Equal(arr, []int{1, 2}) {
				t.Errorf("positional params changed: %v", arr)
			}
			continue
		}
		meta, _ := got["_meta"].(map[string]any)
		if tp, _ := meta["traceparent"].(string); len(tp) != 55 {
			t.Errorf("%v: sent %v", params, got)
		}
		if m, ok := params.(json.RawMessage); ok && strings.Contains(string(m), "progressToken") && meta["progressToken"] != 5.0 {
			t.Errorf("existing _meta lost: %v", got)
		}
	}
}
