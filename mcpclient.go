package jsonrpc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"weak"

	"github.com/seedhq/jsonrpc/internal/codec"
	"github.com/seedhq/jsonrpc/internal/mcp"
	"github.com/seedhq/jsonrpc/internal/streamable"
)

// MCPAuto is the WithMCPVersion value that finds the server's era: the
// newest stateless revision when the server speaks it, else 2025-11-25
// after an initialize handshake.
const MCPAuto = "auto"

// MCPVersion2025 is the last revision of MCP's session era.
const MCPVersion2025 = "2025-11-25"

// DefaultMaxInputRounds bounds how many times one call is sent again with
// the input a server asked for (WithMaxInputRounds).
const DefaultMaxInputRounds = 8

// WithMCPVersion makes a Streamable HTTP client (or DialCommand's, without
// headers) an MCP client of revision version: a stateless one
// (MCPVersion2026: per-request _meta and headers), a session-era one
// (MCPVersion2025: initialize first) or MCPAuto (server/discover, else
// initialize; see docs/mcp.md). Other transports ignore it.
func WithMCPVersion(version string) DialOption { return func(c *dialConfig) { c.mcpVersion = version } }

// WithMCPClientInfo sets the clientInfo an MCP client sends (in _meta or
// initialize; default "seedhq-jsonrpc" with an empty version).
func WithMCPClientInfo(name, version string) DialOption {
	return func(c *dialConfig) { c.mcpInfo = [2]string{name, version} }
}

// WithMCPCapabilities sets the capabilities (a JSON object; default {}) an
// MCP client declares, e.g. {"elicitation": {}} when its WithHandler answers.
func WithMCPCapabilities(caps any) DialOption { return func(c *dialConfig) { c.mcpCaps = caps } }

// WithMaxInputRounds bounds how many times an MCP client sends a call again
// with the input asked for (DefaultMaxInputRounds), then ErrTooManyInputRounds.
func WithMaxInputRounds(n int) DialOption { return func(c *dialConfig) { c.maxInputRounds = n } }

// WithMCPTasks declares the Tasks extension; a stateless tools/call answered
// with a task then polls tasks/get (pollIntervalMs), answers its questions
// with the handler (tasks/update) and returns its result or error (a cancelled
// task's wraps context.Canceled); an ended ctx cancels it. status may be nil.
func WithMCPTasks(status func(taskID, status string)) DialOption {
	return func(c *dialConfig) { c.mcpTasks = &status }
}

// MCPVersion returns the MCP revision the connection speaks: "" before it is
// found, without WithMCPVersion, or when the server refused both eras.
func (c *Conn) MCPVersion() string {
	if v, ok := mcpClientsByConn.Load(weak.Make(c)); ok {
		_, version := v.(*mcpClient).eras.Get()
		return version
	}
	return ""
}

// mcpClientsByConn holds the MCP client of each connection that is one, by
// a weak pointer: an entry leaves when the connection is collected.
var mcpClientsByConn sync.Map // weak.Pointer[Conn] -> *mcpClient

// withStreamMCP makes c (over Streamable HTTP, or to a command) an MCP
// client when cfg asks for one (WithMCPVersion).
func withStreamMCP(c *Conn, cfg *dialConfig) (*Conn, error) {
	if cfg.mcpVersion == "" {
		return c, nil
	}
	m, err := newMCPClient(c, cfg)
	if err != nil {
		c.Close()
		return nil, err
	}
	c.inv = chain(m, cfg.interceptors)
	key := weak.Make(c)
	mcpClientsByConn.Store(key, m)
	runtime.AddCleanup(c, func(k weak.Pointer[Conn]) { mcpClientsByConn.Delete(k) }, key)
	return c, nil
}

// mcpClient is the Invoker of an MCP client, below its interceptors.
type mcpClient struct {
	next   Invoker // the connection's own sending
	conn   *Conn
	ch     *streamable.Client // over Streamable HTTP; nil to a command
	want   string             // MCPAuto or a revision
	rounds int
	state  *mcp.ClientState // its _meta, the tools' Mcp-Param-* annotations
	eras   mcp.EraFinder
	tasks  *func(taskID, status string) // WithMCPTasks
}

// newMCPClient returns the MCP client of conn, or an error for options
// that cannot be sent.
func newMCPClient(conn *Conn, cfg *dialConfig) (*mcpClient, error) {
	ch, _ := conn.ch.(*streamable.Client)
	m := &mcpClient{next: direct{conn}, conn: conn, ch: ch, want: cfg.mcpVersion, rounds: orDefault(cfg.maxInputRounds, DefaultMaxInputRounds), tasks: cfg.mcpTasks}
	var err error
	if m.state, err = mcp.NewClientState(cmp.Or(cfg.mcpInfo[0], "seedhq-jsonrpc"), cfg.mcpInfo[1], cfg.mcpCaps, m.tasks != nil); err != nil {
		return nil, err
	}
	if m.want != MCPAuto && m.want != "" && !mcp.IsHeaderValue(m.want) {
		return nil, fmt.Errorf("jsonrpc: WithMCPVersion %q: not a protocol version", m.want)
	}
	return m, nil
}

func (m *mcpClient) Call(ctx context.Context, method string, params, result any) error {
	era, version, err := m.eraFor(ctx, method)
	if err != nil {
		return err
	}
	if era != mcp.EraStateless {
		return m.next.Call(ctx, method, params, result)
	}
	return m.statelessCall(ctx, version, method, params, result)
}

func (m *mcpClient) Notify(ctx context.Context, method string, params any) error {
	era, version, err := m.eraFor(ctx, method)
	if err != nil {
		return err
	}
	if era != mcp.EraStateless {
		return m.next.Notify(ctx, method, params)
	}
	r, err := m.round(ctx, version, method, params, nil)
	if err != nil {
		return err
	}
	return m.next.Notify(r, method, r.params)
}

func (m *mcpClient) Batch(ctx context.Context, b *Batch) error {
	era, version, err := m.eraFor(ctx, "")
	if err != nil {
		return err
	}
	if era == mcp.EraStateless {
		return errors.New("jsonrpc: MCP " + version + " has no batches: send each message on its own")
	}
	return m.next.Batch(ctx, b)
}

// eraFor returns the era of the server, found once (mcp.EraFinder).
func (m *mcpClient) eraFor(ctx context.Context, method string) (mcp.Era, string, error) {
	return m.eras.Find(func() (mcp.Era, string, error) {
		era, version, err := m.find(ctx, method)
		if err != nil {
			return mcp.EraUnknown, "", err
		}
		if m.ch != nil {
			m.ch.HoldGET(era == mcp.EraStateless)
		}
		m.conn.srv.logger().Debug("jsonrpc: MCP era found", "version", version, "stateless", era == mcp.EraStateless)
		return era, version, nil
	})
}

// find finds the server's era: WithMCPVersion's, or probe's; the session era
// after an initialize (unless the caller's first message is its own).
func (m *mcpClient) find(ctx context.Context, method string) (era mcp.Era, version string, err error) {
	switch {
	case method == "initialize":
		return mcp.EraSession, "", nil // the caller's handshake; the channel keeps its version
	case mcp.IsStatelessVersion(m.want):
		return mcp.EraStateless, m.want, nil
	case m.want == MCPAuto:
		if era, version, err = m.probe(ctx); err != nil || era != mcp.EraSession {
			return era, version, err
		}
	default:
		version = m.want
	}
	return m.initialize(ctx, version)
}

// probe tells the era from server/discover's answer under MCPVersion2026.
func (m *mcpClient) probe(ctx context.Context) (mcp.Era, string, error) {
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	err := m.statelessCall(ctx, MCPVersion2026, "server/discover", nil, &d)
	var e *Error
	reached := errors.As(err, &e) || errors.As(err, new(*HTTPError))
	return mcp.EraOfDiscover(d.SupportedVersions, err, reached, (*mcp.Error)(e))
}

// initialize opens a session of revision version; a server that refuses
// it is no MCP server (mcp.EraNone).
func (m *mcpClient) initialize(ctx context.Context, version string) (mcp.Era, string, error) {
	params := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ClientInfo      json.RawMessage `json:"clientInfo"`
	}{version, m.state.Caps, m.state.Info}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	switch err := m.next.Call(ctx, "initialize", params, &res); {
	case err == nil:
	case errors.As(err, new(*Error)) || errors.As(err, new(*HTTPError)):
		m.conn.srv.logger().Debug("jsonrpc: the server refused initialize: no MCP server", "error", err)
		return mcp.EraNone, "", nil
	default:
		return mcp.EraUnknown, "", err
	}
	if err := m.next.Notify(ctx, "notifications/initialized", nil); err != nil {
		return mcp.EraUnknown, "", err
	}
	return mcp.EraSession, res.ProtocolVersion, nil
}

// statelessCall makes a call of a stateless revision. A tools/call refused
// with -32020 (Mcp-Param-* headers missing or different: the tool unlisted,
// or changed) is sent again once after tools/list, as the revision advises.
func (m *mcpClient) statelessCall(ctx context.Context, version, method string, params, result any) error {
	err := m.statelessRounds(ctx, version, method, params, result)
	if err == nil || method != "tools/call" {
		return err
	}
	var e *Error // declared here: on the heap only for an error
	if !errors.As(err, &e) || e.Code != CodeHeaderMismatch || m.statelessRounds(ctx, version, "tools/list", nil, nil) != nil {
		return err
	}
	return m.statelessRounds(ctx, version, method, params, result)
}

// statelessRounds makes a call of a stateless revision, sending it again
// with the input the server asks for (the handler's answers) while allowed.
func (m *mcpClient) statelessRounds(ctx context.Context, version, method string, params, result any) error {
	r, err := m.round(ctx, version, method, params, result)
	if err != nil {
		return err
	}
	if err := m.state.RefuseRejected(method, r.params); err != nil {
		return err
	}
	raw, err := mcp.Rounds(method, r.params, m.rounds, func(p json.RawMessage) (json.RawMessage, error) {
		r.raw, r.params = nil, p
		err := m.next.Call(r, method, &r.params, r) // a pointer: not boxed
		return r.raw, err
	}, func(method string, params json.RawMessage) (json.RawMessage, error) {
		return m.answer(ctx, method, params)
	})
	if raw == nil || err != nil {
		return err // decoded into result (mcpRound.decode), or failed
	}
	if method == "tools/list" { // kept: a tool list, or a tools/call's task (WithMCPTasks)
		var rejected []string
		if raw, rejected = m.state.LearnTools(raw); rejected != nil {
			m.conn.srv.logger().Warn("jsonrpc: MCP tools left out of tools/list: invalid x-mcp-header annotation", "tools", rejected)
		}
	} else if raw, err = (&mcp.TaskWaiter{Status: *m.tasks, Answer: m.answer, Call: func(ctx context.Context, method string, p any, r *json.RawMessage) error {
		return m.statelessRounds(ctx, version, method, p, r)
	}}).Wait(ctx, raw); err != nil {
		return err
	}
	return decodeResult(method, raw, result, m.conn.strictResults)
}

// answer serves a server's request for input with the connection's
// handler, as under the session era it would serve the request itself.
func (m *mcpClient) answer(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	srv, req := m.conn.srv, &Request{Method: method, Params: params}
	_, h := srv.handler(req, []byte(method))
	if h == nil {
		return nil, methodNotFound(method)
	}
	v, err := srv.run(ctx, h, req)
	if err != nil {
		return nil, srv.toError(req, err)
	}
	return codec.Marshal(v)
}

// round returns a round of a stateless call, its params with the _meta of
// revision version (the caller's _meta members kept).
func (m *mcpClient) round(ctx context.Context, version, method string, params, result any) (r *mcpRound, err error) {
	r = &mcpRound{Context: ctx, into: result, method: method, keep: method == "tools/list" || m.tasks != nil && method == "tools/call"}
	if r.params, err = m.state.WithMeta(r.room[:0], params, version); err != nil {
		return nil, err
	}
	r.header = m.state.Headers(headerFromContext(ctx), version, method, r.params)
	return r, nil
}

// mcpRound is a round of a stateless call in one allocation: the context
// with its headers (see ContextWithHeader), its params, and the result the
// connection decodes into (decodeResult): into the caller's from the reply
// in place, or into raw when the client reads it (for input; with keep).
type mcpRound struct {
	context.Context
	header      http.Header
	params, raw json.RawMessage
	into        any
	method      string
	keep        bool
	room        [512]byte // params' memory, when they fit (the _meta alone is 200 bytes)
}

func (r *mcpRound) Value(key any) any {
	if key == (headerKey{}) {
		return r.header
	}
	return r.Context.Value(key)
}

func (r *mcpRound) decode(result []byte, strict bool) error {
	if _, _, asked := mcp.InputRequired(result); !asked && !r.keep {
		return decodeResult(r.method, result, r.into, strict)
	}
	return codec.UnmarshalResult(result, &r.raw, false)
}
