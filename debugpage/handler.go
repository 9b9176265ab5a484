package debugpage

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/steady-go/steady/events"
	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/reconcile"
	"github.com/steady-go/steady/reconcile/conditions"
	"github.com/steady-go/steady/store"
)

// MaxErrorBytes bounds every error text and condition message the page and
// the API show, in bytes: a longer one is cut on a character boundary and
// ends in the mark " …(cut)", which counts within the bound.
const MaxErrorBytes = 2048

// cutMark ends a text bound cut.
const cutMark = " …(cut)"

//go:embed assets
var assets embed.FS

// Cache is what the page shows of a cache; *cache.Cache implements it. A
// cache that also has Kind() string, Version() string, Relists() int64,
// DriftRepairs() int64, Undecodable() int or Panics() int64 gets those
// shown too.
type Cache interface {
	HasSynced() bool
	Revision() int64
	Len() int
}

// ObjectFunc returns the object of key in the Loop named loop, for
// /api/object, or false when there is none.
type ObjectFunc func(loop, key string) (any, bool)

// Option configures a Handler.
type Option func(*Handler)

// WithObjects enables /api/object: get returns the object to show, as JSON.
// Without it the page shows no object bodies. Objects may hold secrets:
// enable it only where the page is protected.
func WithObjects(get ObjectFunc) Option { return func(h *Handler) { h.objects = get } }

// WithEvents shows the recent events r recorded (events.Recorder.Recent)
// on the page, and serves them under /api/events; with ?kind=K&name=N it
// serves the stored events of that object (events.Recorder.For, the
// Events section of `kubectl describe`).
func WithEvents(r *events.Recorder) Option { return func(h *Handler) { h.events = r } }

// Handler serves the page and the API; see the package documentation.
// Create it with New. It is safe for concurrent use; add Loops and caches
// at any time.
type Handler struct {
	objects ObjectFunc
	events  *events.Recorder
	mux     *http.ServeMux

	mu     sync.Mutex
	loops  []reconcile.Inspectable
	caches []namedCache
}

type namedCache struct {
	name string
	c    Cache
}

// New returns a Handler with no Loops and no caches.
func New(opts ...Option) *Handler {
	h := &Handler{mux: http.NewServeMux()}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	static, _ := fs.Sub(assets, "assets")
	h.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	h.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, static, "index.html")
	})
	h.mux.HandleFunc("GET /api/loops", h.serveLoops)
	h.mux.HandleFunc("GET /api/keys", h.serveKeys)
	h.mux.HandleFunc("GET /api/caches", h.serveCaches)
	h.mux.HandleFunc("GET /api/object", h.serveObject)
	h.mux.HandleFunc("GET /api/events", h.serveEvents)
	return h
}

// AddLoop adds a Loop (any *reconcile.Loop). It returns an error for nil (a
// nil *reconcile.Loop included) or for a second Loop of the same name.
func (h *Handler) AddLoop(l reconcile.Inspectable) error {
	if nilness.IsNil(l) {
		return errors.New("debugpage: nil Loop")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.loops {
		if o.Name() == l.Name() {
			return errors.New("debugpage: Loop " + l.Name() + " added twice")
		}
	}
	h.loops = append(h.loops, l)
	return nil
}

// AddCache adds a cache shown under name. It returns an error for nil (a nil
// *cache.Cache included) or for a second cache of the same name.
func (h *Handler) AddCache(name string, c Cache) error {
	if nilness.IsNil(c) {
		return errors.New("debugpage: nil cache")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.caches {
		if o.name == name {
			return errors.New("debugpage: cache " + name + " added twice")
		}
	}
	h.caches = append(h.caches, namedCache{name, c})
	return nil
}

// ServeHTTP implements http.Handler. Only GET and HEAD are served.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "read-only", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'")
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) snapshot() ([]reconcile.Inspectable, []namedCache) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.loops), slices.Clone(h.caches)
}

// LoopView is a Loop as the API shows it.
type LoopView struct {
	reconcile.LoopInfo
	// Idle is the number of workers not reconciling.
	Idle int `json:"idle"`
	// Role is "leading" or "standby", or "sharded" for a replica of a
	// sharded Loop (its shards are in Sharding).
	Role string `json:"role"`
}

func (h *Handler) serveLoops(w http.ResponseWriter, _ *http.Request) {
	loops, _ := h.snapshot()
	out := make([]LoopView, 0, len(loops))
	for _, l := range loops {
		s := l.Info()
		v := LoopView{LoopInfo: s, Role: "standby"}
		if s.Leading {
			v.Role, v.Idle = "leading", s.Workers-s.Busy
		}
		if s.Sharding != nil {
			v.Role = "sharded"
		}
		for i := range v.RecentFailures {
			v.RecentFailures[i].Error = bound(v.RecentFailures[i].Error)
		}
		out = append(out, v)
	}
	writeJSON(w, out)
}

// KeyView is a key as the API shows it.
type KeyView struct {
	Loop         string            `json:"loop"`
	Key          string            `json:"key"`
	Phase        reconcile.Phase   `json:"phase"`
	Why          string            `json:"why"`
	Until        time.Time         `json:"until,omitzero"`
	Failures     int               `json:"failures"`
	LastError    string            `json:"lastError,omitempty"`
	LastResult   string            `json:"lastResult,omitempty"`
	LastDuration string            `json:"lastDuration,omitempty"`
	LastFailure  time.Time         `json:"lastFailure,omitzero"`
	Stalled      bool              `json:"stalled"`
	Reason       string            `json:"reason,omitempty"`
	Message      string            `json:"message,omitempty"`
	Oscillation  *OscillationView  `json:"oscillation,omitempty"`
	Conditions   []store.Condition `json:"conditions,omitempty"`
	Generation   int64             `json:"generation,omitempty"`
	// Kstatus is the object's status as kstatus computes it (see Kstatus),
	// when the Loop reads its conditions.
	Kstatus string `json:"kstatus,omitempty"`
}

// OscillationView is an oscillation report: its kind, the flipping fields
// in diff.Path notation, and the writes within the window.
type OscillationView struct {
	Kind    string   `json:"kind"`
	Paths   []string `json:"paths"`
	Writes  int      `json:"writes"`
	Window  string   `json:"window"`
	Message string   `json:"message"`
}

func (h *Handler) serveKeys(w http.ResponseWriter, r *http.Request) {
	loops, _ := h.snapshot()
	only, q := r.URL.Query().Get("loop"), r.URL.Query().Get("q")
	out := []KeyView{}
	var rest []KeyView // not stalled or oscillating: after every Loop's first group
	for _, l := range loops {
		if only != "" && l.Name() != only {
			continue
		}
		for _, k := range l.InspectAll() {
			if q != "" && !strings.Contains(k.Key, q) {
				continue
			}
			v := keyView(l.Name(), k)
			if v.Stalled || v.Oscillation != nil {
				out = append(out, v)
			} else {
				rest = append(rest, v)
			}
		}
	}
	writeJSON(w, append(out, rest...))
}

func keyView(loop string, k reconcile.KeyInfo) KeyView {
	v := KeyView{Loop: loop, Key: k.Key, Phase: k.Phase, Why: k.Why, Until: k.Until, Failures: k.Failures,
		LastError: bound(k.LastError), LastResult: k.LastResult, Stalled: k.Stalled, Reason: k.StalledReason,
		Message: bound(k.StalledMessage), Generation: k.Generation, LastFailure: k.LastFailure}
	// One source of truth: the object's Stalled condition, when it has
	// one, is what the row says (it is what every other tool reads); the
	// Loop's own decision may not have been written yet, or was refused.
	if c, ok := conditions.Get(k.Conditions, conditions.Stalled); ok {
		v.Stalled = c.Status == store.ConditionTrue
		v.Reason, v.Message = "", ""
		if v.Stalled {
			v.Reason, v.Message = c.Reason, bound(c.Message)
		}
	}
	if k.LastDuration > 0 {
		v.LastDuration = k.LastDuration.String()
	}
	if k.Generation > 0 {
		v.Kstatus, _ = Kstatus(k.Generation, false, k.Conditions)
	}
	for _, c := range k.Conditions {
		c.Message = bound(c.Message)
		v.Conditions = append(v.Conditions, c)
	}
	if o := k.Oscillation; o != nil {
		ov := &OscillationView{Kind: o.Kind.String(), Writes: o.Writes, Window: o.Window.String(), Message: bound(o.Message())}
		for _, p := range o.Paths {
			ov.Paths = append(ov.Paths, p.String())
		}
		v.Oscillation = ov
	}
	return v
}

// bound cuts s to at most MaxErrorBytes, cutMark included, on a rune
// boundary.
func bound(s string) string {
	if len(s) <= MaxErrorBytes {
		return s
	}
	cut := MaxErrorBytes - len(cutMark)
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + cutMark
}

// CacheView is a cache as the API shows it. The counters are nil when the
// cache does not keep them.
type CacheView struct {
	Name         string `json:"name"`
	Kind         string `json:"kind,omitempty"`    // the kind of its objects, when it reads a Store
	Version      string `json:"version,omitempty"` // the version it serves, for a versioned kind
	Synced       bool   `json:"synced"`
	Revision     int64  `json:"revision"`
	Objects      int    `json:"objects"`
	Relists      *int64 `json:"relists,omitempty"`
	DriftRepairs *int64 `json:"driftRepairs,omitempty"`
	Undecodable  *int   `json:"undecodable,omitempty"`
	Panics       *int64 `json:"panics,omitempty"` // panics of user functions the cache called (cache.Cache.Panics)
}

func (h *Handler) serveCaches(w http.ResponseWriter, _ *http.Request) {
	_, caches := h.snapshot()
	out := make([]CacheView, 0, len(caches))
	for _, nc := range caches {
		v := CacheView{Name: nc.name, Synced: nc.c.HasSynced(), Revision: nc.c.Revision(), Objects: nc.c.Len()}
		if c, ok := nc.c.(interface{ Kind() string }); ok {
			v.Kind = c.Kind()
		}
		if c, ok := nc.c.(interface{ Version() string }); ok {
			v.Version = c.Version()
		}
		if c, ok := nc.c.(interface{ Relists() int64 }); ok {
			n := c.Relists()
			v.Relists = &n
		}
		if c, ok := nc.c.(interface{ DriftRepairs() int64 }); ok {
			n := c.DriftRepairs()
			v.DriftRepairs = &n
		}
		if c, ok := nc.c.(interface{ Undecodable() int }); ok {
			n := c.Undecodable()
			v.Undecodable = &n
		}
		if c, ok := nc.c.(interface{ Panics() int64 }); ok {
			n := c.Panics()
			v.Panics = &n
		}
		out = append(out, v)
	}
	writeJSON(w, out)
}

func (h *Handler) serveObject(w http.ResponseWriter, r *http.Request) {
	if h.objects == nil {
		http.Error(w, "object bodies are not enabled (debugpage.WithObjects)", http.StatusForbidden)
		return
	}
	obj, ok := h.objects(r.URL.Query().Get("loop"), r.URL.Query().Get("key"))
	if !ok {
		http.Error(w, "no such object", http.StatusNotFound)
		return
	}
	writeJSON(w, obj)
}

// EventsView is what /api/events serves: the recent events (newest
// first) or an object's stored ones (oldest first), and the recorder's
// counts.
type EventsView struct {
	Events []events.Event `json:"events"`
	Stats  events.Stats   `json:"stats"`
}

func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	if h.events == nil {
		writeJSON(w, EventsView{Events: []events.Event{}})
		return
	}
	out := EventsView{Stats: h.events.Stats()}
	kind, name := r.URL.Query().Get("kind"), r.URL.Query().Get("name")
	if kind != "" || name != "" {
		evs, err := h.events.For(r.Context(), kind, name)
		if err != nil {
			http.Error(w, "events: "+bound(err.Error()), http.StatusServiceUnavailable)
			return
		}
		out.Events = evs
	} else {
		out.Events = h.events.Recent()
	}
	for i := range out.Events {
		out.Events[i].Message = bound(out.Events[i].Message)
	}
	if out.Events == nil {
		out.Events = []events.Event{}
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding: "+bound(err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}
