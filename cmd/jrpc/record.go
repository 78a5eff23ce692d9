package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/spf13/cobra"
)

// A recording is JSON lines, one per message, in the order the bridge saw
// them:
//
//	{"time":"2026-12-01T09:30:00.123456Z","conn":1,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}}
//	{"time":"2026-12-01T09:30:00.124001Z","conn":1,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":3}}
//
// "message" holds the message exactly as it crossed; a message that is not
// one line of valid JSON is kept as a string in "text" instead.
type recordLine struct {
	Time    time.Time       `json:"time"`
	Conn    int64           `json:"conn"`
	From    string          `json:"from"` // "client" or "server"
	Message json.RawMessage `json:"message,omitempty"`
	Text    *string         `json:"text,omitempty"`
}

// bytes returns the message of a line as it crossed.
func (l *recordLine) bytes() []byte {
	if l.Text != nil {
		return []byte(*l.Text)
	}
	return l.Message
}

// recorder writes the lines of a recording.
type recorder struct {
	mu    sync.Mutex
	w     *bufio.Writer
	f     *os.File
	conns atomic.Int64
}

func (r *recorder) write(conn int64, from string, msg []byte) {
	b := []byte(`{"time":`)
	b = append(b, marshal(time.Now().UTC().Format(time.RFC3339Nano))...)
	b = append(b, `,"conn":`...)
	b = strconv.AppendInt(b, conn, 10)
	b = append(b, `,"from":"`+from+`"`...)
	if json.Valid(msg) && !bytes.ContainsAny(msg, "\r\n") {
		b = append(b, `,"message":`...)
		b = append(b, msg...) // as it crossed, byte for byte
	} else {
		b = append(b, `,"text":`...)
		b = append(b, marshal(string(msg))...)
	}
	b = append(b, "}\n"...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(b)
	r.w.Flush()
}

// tapped records the messages of one client connection.
type tapped struct {
	rawConn
	rec  *recorder
	conn int64
}

func (t *tapped) Send(ctx context.Context, msg []byte) error {
	t.rec.write(t.conn, "server", msg)
	return t.rawConn.Send(ctx, msg)
}

func (t *tapped) Recv(ctx context.Context) ([]byte, error) {
	b, err := t.rawConn.Recv(ctx)
	if err == nil {
		t.rec.write(t.conn, "client", b)
	}
	return b, err
}

func init() {
	var (
		f        bridgeFlags
		out      string
		appendTo bool
	)
	rec := &cobra.Command{
		Use:   "record --listen URL --out FILE (URL | --exec 'COMMAND')",
		Short: "A recording proxy: bridge to a server and write every message, both ways, to a file",
		Long: `Serve --listen URL like jrpc bridge, forwarding to the target, and write every
message in both directions to FILE as JSON lines with a timestamp, the
connection number and the side it came from:

  {"time":"…","conn":1,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2]}}
  {"time":"…","conn":1,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":3}}

Messages are kept byte for byte. FILE must not exist yet (--append adds to
it). jrpc replay FILE then serves the recorded answers without the server.`,
		Example: `  jrpc record --listen tcp://127.0.0.1:7000 --out session.jsonl tcp://127.0.0.1:9090
  jrpc record --listen stdio: --out lsp.jsonl --framing lsp --exec 'gopls serve'`,
		Args: targetArgs("", 0, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return &exitError{code: exitUsage, err: errors.New("record needs --out FILE"), hint: "jrpc record --listen tcp://127.0.0.1:7000 --out session.jsonl URL"}
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if appendTo {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			file, err := os.OpenFile(out, flags, 0o644)
			if errors.Is(err, os.ErrExist) {
				return &exitError{code: exitUsage, err: fmt.Errorf("%s exists already: record does not overwrite it", out), hint: "another --out FILE, or --append to add to it"}
			}
			if err != nil {
				return &exitError{code: exitUsage, err: fmt.Errorf("cannot write the recording: %v", err)}
			}
			defer file.Close()
			r := &recorder{f: file, w: bufio.NewWriter(file)}
			return runBridgeWith(cmd.Context(), args, &f, func(b *bridge) { b.rec = r })
		},
	}
	rec.Flags().StringVarP(&f.listen, "listen", "l", "", "accept connections on `URL` (tcp://, unix://, ws://, http://, stdio:)")
	rec.Flags().StringVar(&f.listenFraming, "listen-framing", "", "framing on the listening stream (line or lsp; default: --framing)")
	rec.Flags().BoolVar(&f.shared, "shared", false, "one target connection for every client, instead of one each")
	rec.Flags().StringVarP(&out, "out", "o", "", "write the recording to `FILE` (JSON lines)")
	rec.Flags().BoolVar(&appendTo, "append", false, "add to FILE when it exists")

	var rf bridgeFlags
	replay := &cobra.Command{
		Use:   "replay FILE [--listen URL]",
		Short: "Serve the answers of a recording (jrpc record) to matching requests",
		Long: `Serve --listen URL (default stdio:) and answer each request with the answer
recorded for the same method and params (params compared as JSON values:
member order and spacing do not matter), byte for byte, with the request's
own id. A request recorded several times gets its recorded answers in turn
(the last one again after that). Notifications the server sent after an
answer in the recording follow it again. A request the recording does not
hold gets -32601 (method never recorded) or -32602 (these params never
recorded), its data naming what was recorded.`,
		Example: `  jrpc replay session.jsonl --listen tcp://127.0.0.1:9090
  jrpc --exec 'jrpc replay session.jsonl' call sum '[1,2]'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rp, err := loadReplay(args[0])
			if err != nil {
				return err
			}
			if rf.listen == "" {
				rf.listen = "stdio:"
			}
			return runBridgeWith(cmd.Context(), nil, &rf, func(b *bridge) {
				b.open = func(context.Context) (rawConn, error) { return rp.conn(), nil }
			})
		},
	}
	replay.Flags().StringVarP(&rf.listen, "listen", "l", "", "serve on `URL` (tcp://, unix://, ws://, http://, stdio:; default stdio:)")
	replay.Flags().StringVar(&rf.listenFraming, "listen-framing", "", "framing on the listening stream (line or lsp; default: --framing)")
	rootCmd.AddCommand(rec, replay)
}

// replayer answers requests from a recording.
type replayer struct {
	mu      sync.Mutex
	calls   map[string][]*recordedCall // by method and canonical params
	methods map[string][]string        // method → the params recorded (for errors)
	next    map[string]int
}

// recordedCall is a recorded request's answer and the notifications of
// the server that followed it.
type recordedCall struct {
	response []byte
	then     [][]byte
}

func loadReplay(path string) (*replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot read the recording: %v", err)}
	}
	defer f.Close()
	ld := replayLoader{
		rp:    &replayer{calls: map[string][]*recordedCall{}, methods: map[string][]string{}, next: map[string]int{}},
		asked: map[replayKey]string{},
		last:  map[int64]*recordedCall{},
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if err := ld.line(sc.Bytes(), path, n); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("cannot read the recording: %v", err)}
	}
	if len(ld.rp.calls) == 0 {
		return nil, &exitError{code: exitUsage, err: fmt.Errorf("%s holds no answered request", path)}
	}
	return ld.rp, nil
}

// replayKey names a request: its connection and id.
type replayKey struct {
	conn int64
	id   string
}

// replayLoader pairs a recording's requests with their responses, and
// the server's notifications with the call they followed.
type replayLoader struct {
	rp    *replayer
	asked map[replayKey]string    // an unanswered request → its match key
	last  map[int64]*recordedCall // a connection's last answer, the server's notifications follow it
}

// line reads line n of the recording.
func (ld *replayLoader) line(b []byte, path string, n int) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	var l recordLine
	if err := json.Unmarshal(b, &l); err != nil || (l.From != "client" && l.From != "server") {
		return &exitError{code: exitUsage, err: fmt.Errorf("%s:%d is not a line of a jrpc recording", path, n), hint: "jrpc record --out FILE writes them"}
	}
	for _, m := range splitBatch(l.bytes()) {
		ld.message(l.From, l.Conn, m)
	}
	return nil
}

// message files one message the client or the server sent on conn.
func (ld *replayLoader) message(from string, conn int64, m []byte) {
	var e struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(m, &e) != nil {
		return
	}
	switch {
	case from == "client" && e.Method != nil && e.ID != nil:
		ld.request(conn, *e.Method, e.ID, e.Params)
	case from == "server" && e.Method == nil && e.ID != nil:
		ld.response(conn, e.ID, m)
	case from == "server" && e.Method != nil && e.ID == nil:
		if c := ld.last[conn]; c != nil {
			c.then = append(c.then, m)
		}
	case from == "client":
		delete(ld.last, conn) // the server's notifications after this follow another message
	}
}

func (ld *replayLoader) request(conn int64, method string, id, params json.RawMessage) {
	ld.asked[replayKey{conn, string(compact(id))}] = matchKey(method, params)
	if p := string(canonical(params)); !containsString(ld.rp.methods[method], p) {
		ld.rp.methods[method] = append(ld.rp.methods[method], p)
	}
}

func (ld *replayLoader) response(conn int64, id, m json.RawMessage) {
	k, ok := ld.asked[replayKey{conn, string(compact(id))}]
	if !ok {
		return
	}
	delete(ld.asked, replayKey{conn, string(compact(id))})
	c := &recordedCall{response: m}
	ld.rp.calls[k] = append(ld.rp.calls[k], c)
	ld.last[conn] = c
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// splitBatch returns the elements of a batch, or the message itself.
func splitBatch(msg []byte) [][]byte {
	if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(b, &elems) != nil {
			return nil
		}
		out := make([][]byte, len(elems))
		for i, e := range elems {
			out[i] = e
		}
		return out
	}
	return [][]byte{msg}
}

// canonical returns v re-encoded with sorted members and no spacing
// (numbers keep their text), so that equal JSON values compare equal.
func canonical(v json.RawMessage) []byte {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte("null")
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if dec.Decode(&x) != nil {
		return compact(v)
	}
	b, _ := json.Marshal(sameNumbers(x))
	return b
}

// sameNumbers rewrites the numbers in x (decoded with UseNumber) to one
// text per value, so that 42, 42.0 and 4.2e1 compare equal.
func sameNumbers(x any) any {
	switch v := x.(type) {
	case json.Number:
		if f, ok := new(big.Float).SetPrec(256).SetString(string(v)); ok {
			return json.Number(f.Text('g', -1))
		}
	case []any:
		for i := range v {
			v[i] = sameNumbers(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = sameNumbers(v[k])
		}
	}
	return x
}

func matchKey(method string, params json.RawMessage) string {
	return method + "\x00" + string(canonical(params))
}

// answer returns the messages answering one request (nil for a
// notification or a response of the client).
func (rp *replayer) answer(msg []byte) [][]byte {
	var e struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &e); err != nil {
		if json.Valid(msg) {
			return [][]byte{[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}`)}
		}
		return [][]byte{[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)}
	}
	if e.Method == nil || e.ID == nil {
		return nil
	}
	k := matchKey(*e.Method, e.Params)
	rp.mu.Lock()
	calls := rp.calls[k]
	var c *recordedCall
	if len(calls) > 0 {
		i := rp.next[k]
		c = calls[min(i, len(calls)-1)]
		rp.next[k] = i + 1
	}
	recorded := rp.methods[*e.Method]
	rp.mu.Unlock()
	if c == nil {
		code, text := jsonrpc.CodeMethodNotFound, "method not found in the recording: "+*e.Method
		data := []byte("null")
		if recorded != nil {
			code, text = jsonrpc.CodeInvalidParams, "no recorded call of "+*e.Method+" with these params"
			data = []byte(`{"recorded_params":[` + strings.Join(recorded[:min(len(recorded), 10)], ",") + `]}`)
		}
		return [][]byte{[]byte(`{"jsonrpc":"2.0","id":` + string(e.ID) + `,"error":{"code":` + strconv.Itoa(code) + `,"message":` + string(marshal(text)) + `,"data":` + string(data) + `}}`)}
	}
	resp, ok := replaceID(c.response, e.ID)
	if !ok {
		resp = c.response
	}
	return append([][]byte{resp}, c.then...)
}

// conn returns a connection to the recording, as to a server.
func (rp *replayer) conn() rawConn { return &replayConn{queue: newQueue(), rp: rp} }

// replayConn answers the requests sent to it from the recording.
type replayConn struct {
	*queue
	rp *replayer
}

func (c *replayConn) Send(ctx context.Context, msg []byte) error {
	var answers, then [][]byte
	batch := false
	if b := bytes.TrimSpace(msg); len(b) > 0 && b[0] == '[' {
		batch = true
	}
	for _, m := range splitBatch(msg) {
		a := c.rp.answer(m)
		if len(a) > 0 {
			answers = append(answers, a[0])
			then = append(then, a[1:]...)
		}
	}
	var replies [][]byte
	switch {
	case batch && len(answers) > 0:
		replies = append(replies, append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']'))
	case !batch:
		replies = answers
	}
	for _, r := range append(replies, then...) {
		if err := c.push(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
