package tasks

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// engine is one process's view of one scope: the store, the host client
// and who this process is.
type engine struct {
	cfg    Config
	t      Timeouts
	dir    string
	server string
	flavor string
	st     *store.Store
	host   *opencode.Client
	self   owner.Identity
}

// scope is what names a store: a project directory and a server.
type scope struct {
	Directory string `json:"directory"`
	ServerURL string `json:"serverUrl"`
	Flavor    string `json:"flavor,omitempty"`
}

func (c *Config) scopeOf(req Request) (scope, error) {
	s := scope{Directory: req.Context.Directory, ServerURL: req.Host.ServerURL, Flavor: req.Host.Flavor}
	if s.ServerURL == "" {
		s.ServerURL = c.ServerURL
	}
	if s.ServerURL == "" {
		return s, usageErr("no OpenCode server: the request names no host.serverUrl and SLIM_OPENCODE_URL is not set")
	}
	if s.Directory == "" {
		return s, usageErr("the request names no context.directory")
	}
	if !filepath.IsAbs(s.Directory) {
		return s, usageErr("context.directory %q is not an absolute path", s.Directory)
	}
	if s.Flavor == "" {
		s.Flavor = "v1"
	}
	return s, nil
}

// hostScope is the scope a HostScope names, checked as a request's is.
func (c *Config) hostScope(sc HostScope) (scope, error) {
	return c.scopeOf(Request{Context: CallContext{Directory: sc.Directory}, Host: HostInfo{ServerURL: sc.ServerURL, Flavor: sc.Flavor}})
}

// open returns the engine of a scope.
func open(cfg Config, sc scope) (*engine, error) {
	st, err := store.OpenScope(cfg.StateDir, sc.Directory, strings.TrimRight(sc.ServerURL, "/"), store.Options{Now: cfg.Now})
	if err != nil {
		return nil, storeErr(err)
	}
	hc, err := hostClient(cfg, sc)
	if err != nil {
		return nil, err
	}
	return &engine{cfg: cfg, t: cfg.timeouts(), dir: sc.Directory, server: sc.ServerURL, flavor: sc.Flavor, st: st, host: hc, self: owner.Self()}, nil
}

// hostClient is the HTTP client of a scope's server.
func hostClient(cfg Config, sc scope) (*opencode.Client, error) {
	hc, err := opencode.New(opencode.Config{
		BaseURL:   sc.ServerURL,
		Directory: sc.Directory,
		Username:  cfg.Username,
		Password:  cfg.Password,
		V2:        sc.Flavor == "v2",
	})
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return hc, nil
}

func (e *engine) now() time.Time { return e.cfg.now() }

// scope names the engine's store, for a settler to open it.
func (e *engine) scope() scope { return scope{Directory: e.dir, ServerURL: e.server, Flavor: e.flavor} }

// update runs one store transaction. A tool error fn returns passes
// through; any failure of the store itself fails the call closed.
func (e *engine) update(fn func(*store.State) error) error {
	err := e.st.Update(fn)
	return e.storeFailure(err)
}

// view reads the document without the lock.
func (e *engine) view(fn func(*store.State) error) error {
	return e.storeFailure(e.st.View(fn))
}

func (e *engine) storeFailure(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := AsError(err); ok {
		return err
	}
	if se, ok := store.AsError(err); ok && se.Kind != store.Refused {
		return storeErr(err)
	}
	return err
}

// snapshot is one read of the live status map.
type snapshot struct {
	m   opencode.StatusMap
	err string // why the map cannot be used, when it cannot
	at  time.Time
	// probe, on a v2 host (which has no map), asks the host about one
	// session; probed keeps its answers, so a call asks once a session.
	probe  func(id string) liveObs
	probed map[string]liveObs
}

// liveObs is what a snapshot says about one session.
type liveObs struct {
	live   opencode.Live // busy or retry
	absent bool          // a valid map without the session: it is idle
	err    string        // why nothing can be concluded
	// unprobed: a v2 snapshot ran out of time before it could ask.
	unprobed bool
}

func (o liveObs) known() bool { return o.live != "" }

// snapshot reads the live status map once within the status deadline.
func (e *engine) snapshot(ctx context.Context) snapshot {
	if e.v2() {
		return e.snapshotV2(ctx)
	}
	s := snapshot{at: e.now()}
	ctx, cancel := context.WithTimeout(ctx, e.t.Status)
	defer cancel()
	m, err := e.host.Status(ctx)
	if err != nil {
		s.err = err.Error()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) || opencode.Timeout(err) {
			s.err = "Session status lookup timed out"
		}
		return s
	}
	s.m = m
	return s
}

func (s snapshot) observe(id string) liveObs {
	if s.probe != nil {
		o, ok := s.probed[id]
		if !ok {
			o = s.probe(id)
			s.probed[id] = o
		}
		return o
	}
	if s.err != "" {
		return liveObs{err: s.err}
	}
	o := s.m.Observe(id)
	switch {
	case o.Known:
		return liveObs{live: o.Live}
	case o.Absent:
		return liveObs{absent: true}
	case o.Err != "":
		return liveObs{err: o.Err}
	}
	return liveObs{err: "live status unavailable"}
}

// peek is observe without asking the host anything: what a transaction
// may look at under the store's lock.
func (s snapshot) peek(id string) liveObs {
	if s.probe != nil {
		if o, ok := s.probed[id]; ok {
			return o
		}
		return liveObs{err: s.err}
	}
	return s.observe(id)
}

// readCtx bounds one read of a transcript or a session.
func (e *engine) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.t.Read)
}
