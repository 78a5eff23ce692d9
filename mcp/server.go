package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seedhq/jsonrpc"
	"github.com/seedhq/jsonrpc/state"
)

// Implementation names a server (or a client).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitzero"`
	Version string `json:"version"`
}

// SessionVersions are the session-era revisions a Server negotiates,
// newest first; StatelessVersions those it serves statelessly.
var (
	SessionVersions   = []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	StatelessVersions = []string{jsonrpc.MCPVersion2026}
)

// DefaultCacheTTL is the freshness hint (ms) of lists and reads under the
// stateless era (Server.CacheTTL).
const DefaultCacheTTL = 5 * 60 * 1000

// Server is an MCP server: what it offers, and the state of its sessions.
// Make one with NewServer; register tools, resources and prompts; serve
// Mux. Its methods are safe for concurrent use.
type Server struct {
	Info         Implementation
	Instructions string
	// PageSize is the number of entries of one page of tools/list,
	// prompts/list, resources/list and resources/templates/list (0: one
	// page with everything).
	PageSize int
	// CacheTTL is the ttlMs hint of lists and reads under the stateless era
	// (0: DefaultCacheTTL).
	CacheTTL int64
	// Complete answers completion/complete (nil: an empty completion).
	Complete func(ctx context.Context, p CompleteParams) (Completion, error)
	// Rounds asks the client for input (Ask); its Keys sign the stateless
	// era's requestState (NewServer sets a random key: set the same keys on
	// every instance behind a load balancer).
	Rounds *jsonrpc.InputRounds
	// Tasks keeps the tasks of the Tasks extension (nil: a memory store
	// holding at most MaxTasks, 0 meaning DefaultMaxTasks); TaskTTL is how
	// long a finished task stays readable after it ended (0:
	// DefaultTaskTTL).
	Tasks    TaskStore
	MaxTasks int
	TaskTTL  time.Duration
	// TaskPollInterval is the pollIntervalMs a task suggests to its
	// client (0: DefaultTaskPollTime).
	TaskPollInterval time.Duration
	// Broker, when set (the same on every instance, with a SessionStore),
	// carries ResourceUpdated to every instance (see there); nil: this
	// process only. Mux subscribes; Close ends it.
	Broker state.Broker

	mu        sync.RWMutex
	tools     map[string]*tool
	toolOrder []string // tools/list lists tools in the order they were added
	resources map[string]*resource
	templates []*template
	prompts   map[string]*prompt
	sessions  map[*jsonrpc.Conn]*session // initialized session-era clients
	feed      jsonrpc.ChangeFeed         // stateless-era listeners
	serving   bool
	running   running // the tasks this process runs
	relay     context.CancelFunc
}

// session is what a session-era client set: its log level and the
// resources it subscribed to; with a SessionStore they are kept in the
// session's Values (shared), under levelKey and subKey+uri, so that every
// instance honours them.
type session struct {
	level  int // index in LogLevels; -1: none set
	subs   map[string]bool
	shared state.SessionValues
}

// The keys of the session's Values.
const (
	levelKey = "mcp/level"
	subKey   = "mcp/sub/"
)

// storeFailed is the error of a request whose session store failed: -32030,
// as the transport answers then.
func storeFailed(err error) error { return jsonrpc.Errorf(-32030, "%v", err) }

// NewServer returns a server named info, with no tools, resources or
// prompts yet.
func NewServer(info Implementation) *Server {
	k := make([]byte, 32)
	rand.Read(k)
	return &Server{Info: info, Rounds: &jsonrpc.InputRounds{Keys: [][]byte{k}},
		tools: map[string]*tool{}, resources: map[string]*resource{}, prompts: map[string]*prompt{},
		sessions: map[*jsonrpc.Conn]*session{}, feed: jsonrpc.ChangeFeed{Supports: []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}}}
}

// StreamableHTTPOptions are the options of a Streamable HTTP endpoint
// serving both eras: sessions for session-era clients, the stateless
// revisions per request, the Mcp-Param-* headers checked against the
// tools' schemas.
func (s *Server) StreamableHTTPOptions() jsonrpc.StreamableHTTPOptions {
	return jsonrpc.StreamableHTTPOptions{Sessions: true, ProtocolVersions: SessionVersions,
		StatelessVersions: StatelessVersions, ToolInputSchema: s.inputSchema}
}

// era holds the members of every stateless-era result (zero, omitted,
// under the session era).
type era struct {
	ResultType string     `json:"resultType,omitzero"`
	Meta       serverMeta `json:"_meta,omitzero"`
}

// serverMeta is a stateless-era result's _meta: the server's identity (a
// pointer to Server.Info, not a copy or a map to build for each result).
type serverMeta struct {
	Info *Implementation `json:"io.modelcontextprotocol/serverInfo,omitzero"`
}

// cache holds the caching hints of a stateless-era list or read.
type cache struct {
	TTLMs      *int64 `json:"ttlMs,omitzero"`
	CacheScope string `json:"cacheScope,omitzero"`
}

func (s *Server) era(ctx context.Context) era {
	if jsonrpc.MCPMetaFromContext(ctx) == nil {
		return era{}
	}
	return era{ResultType: "complete", Meta: serverMeta{&s.Info}}
}

func (s *Server) cache(ctx context.Context, scope string) cache {
	if jsonrpc.MCPMetaFromContext(ctx) == nil {
		return cache{}
	}
	ttl := s.CacheTTL
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	return cache{TTLMs: &ttl, CacheScope: scope}
}

// capabilities are the server's capabilities: what it has registered.
func (s *Server) capabilities() map[string]any {
	s.mu.RLock()
	withTasks := false
	for _, t := range s.tools {
		withTasks = withTasks || t.info.TaskSupport != ""
	}
	s.mu.RUnlock()
	caps := map[string]any{
		"tools":       map[string]any{"listChanged": true},
		"resources":   map[string]any{"subscribe": true, "listChanged": true},
		"prompts":     map[string]any{"listChanged": true},
		"logging":     map[string]any{},
		"completions": map[string]any{},
	}
	if withTasks {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	return caps
}

// Mux returns the server's methods on a new mux, with
// jsonrpc.MCPStateless in front: serve it on any transport with
// Convention jsonrpc.ConventionMCP.
func (s *Server) Mux() *jsonrpc.Mux {
	mux := jsonrpc.NewMux()
	mux.Use(jsonrpc.MCPStateless(StatelessVersions...), s.adopt)
	s.registerLifecycle(mux)
	s.registerTools(mux)
	s.registerResources(mux)
	s.registerPrompts(mux)
	s.registerUtilities(mux)
	s.registerTasks(mux)
	mux.Handle("subscriptions/listen", &s.feed)
	s.mu.Lock()
	s.serving = true
	relay := s.Broker != nil && s.relay == nil
	ctx := context.Background()
	if relay {
		ctx, s.relay = context.WithCancel(ctx)
	}
	s.mu.Unlock()
	if relay { // subscribed before Mux returns, unless the broker fails: then tried again
		sctx, cancel := context.WithTimeout(ctx, brokerTimeout)
		sub, err := s.Broker.Subscribe(sctx, updatedTopic)
		cancel()
		if err != nil {
			sub = nil
		}
		go s.relayUpdates(ctx, sub)
	}
	return mux
}

// Close ends the stateless era's subscriptions (subscriptions/listen)
// gracefully, and the Broker's subscription.
func (s *Server) Close() {
	s.feed.Close()
	s.mu.Lock()
	if s.relay != nil {
		s.relay()
	}
	s.mu.Unlock()
}

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities,omitzero"`
	ClientInfo      json.RawMessage `json:"clientInfo,omitzero"`
	Meta            json.RawMessage `json:"_meta,omitzero"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitzero"`
}

type discoverResult struct {
	era
	SupportedVersions []string       `json:"supportedVersions"`
	Capabilities      map[string]any `json:"capabilities"`
	Instructions      string         `json:"instructions,omitzero"`
	cache
}

type metaOnly struct {
	Meta json.RawMessage `json:"_meta,omitzero"`
}

func (s *Server) registerLifecycle(mux *jsonrpc.Mux) {
	jsonrpc.Register(mux, "initialize", func(ctx context.Context, p initializeParams) (initializeResult, error) {
		v := SessionVersions[0]
		if slices.Contains(SessionVersions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		s.join(ctx)
		return initializeResult{ProtocolVersion: v, Capabilities: s.capabilities(), ServerInfo: s.Info, Instructions: s.Instructions}, nil
	})
	jsonrpc.Register(mux, "notifications/initialized", func(context.Context, *metaOnly) (any, error) { return nil, nil })
	jsonrpc.Register(mux, "ping", func(ctx context.Context, _ *metaOnly) (era, error) { return s.era(ctx), nil })
	jsonrpc.Register(mux, "server/discover", func(ctx context.Context, _ *metaOnly) (discoverResult, error) {
		e := era{ResultType: "complete", Meta: serverMeta{&s.Info}}
		ttl := s.CacheTTL
		if ttl <= 0 {
			ttl = DefaultCacheTTL
		}
		return discoverResult{era: e, SupportedVersions: append(slices.Clone(StatelessVersions), SessionVersions...),
			Capabilities: s.capabilities(), Instructions: s.Instructions, cache: cache{TTLMs: &ttl, CacheScope: "public"}}, nil
	})
}

// join records the session-era client of ctx (for its log level, its
// subscriptions and the list_changed notifications); it leaves when its
// connection ends.
func (s *Server) join(ctx context.Context) *session {
	c := jsonrpc.SessionConn(ctx)
	if c == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[c]; ss != nil {
		return ss
	}
	ss := &session{level: -1, subs: map[string]bool{}, shared: jsonrpc.MCPSessionValues(ctx)}
	s.sessions[c] = ss
	go func() {
		<-c.Done()
		s.mu.Lock()
		delete(s.sessions, c)
		s.mu.Unlock()
	}()
	return ss
}

// adopt joins a session kept in a SessionStore at its first request here
// (it may have been initialized through another instance), so that the
// notifications of its subscriptions reach it.
func (s *Server) adopt(next jsonrpc.Handler) jsonrpc.Handler {
	return jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if jsonrpc.MCPSessionValues(ctx) != nil {
			s.join(ctx)
		}
		return next.ServeRPC(ctx, req)
	})
}

// notifySessions sends a notification to every session-era client that
// match accepts (nil: all). It never waits for a slow client.
func (s *Server) notifySessions(method string, params any, match func(*session) bool) {
	s.mu.RLock()
	var to []*jsonrpc.Conn
	for c, ss := range s.sessions {
		if match == nil || match(ss) {
			to = append(to, c)
		}
	}
	s.mu.RUnlock()
	for _, c := range to {
		_ = c.Notify(context.Background(), method, params)
	}
}

// changed tells the clients that a list changed (list is "tools",
// "prompts" or "resources"), once serving started.
func (s *Server) changed(list string) {
	s.mu.RLock()
	serving := s.serving
	s.mu.RUnlock()
	if !serving {
		return
	}
	s.notifySessions("notifications/"+list+"/list_changed", nil, nil)
	s.feed.Publish(list + "ListChanged")
}

// page returns the page of names (in order) that cursor starts, and the
// cursor of the next page ("" for none); an invalid cursor is -32602.
func (s *Server) page(names []string, cursor string) ([]string, string, error) {
	return pageOf(s.PageSize, names, cursor)
}

// pageOf is page of any list, size entries a page.
func pageOf[T any](size int, names []T, cursor string) ([]T, string, error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(names) {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
		}
		start = n
	}
	if size <= 0 || start+size >= len(names) {
		return names[start:], "", nil
	}
	end := start + size
	return names[start:end], base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end))), nil
}

// listParams are the params of the list methods.
type listParams struct {
	Cursor string          `json:"cursor,omitzero"`
	Meta   json.RawMessage `json:"_meta,omitzero"`
}
