package store

import (
	"fmt"
	"sync"
)

// WriteOption refines one write: Create, Update, Delete, UpdateStatus, Apply
// or ApplyStatus.
// Each write takes the options listed in its comment and fails with
// ErrInvalid, writing nothing, when given one it does not take (UpdateStatus
// ignores WithForce, for callers that share options with ApplyStatus).
type WriteOption func(*writeConfig)

// writeConfig is what a write's options ask for.
type writeConfig struct {
	force         bool
	revision      int64
	uid           string
	generation    int64
	hasGeneration bool
	meta          *ApplyMeta
	given         writeOptions  // to refuse an option the write does not take
	dry           bool          // DryRun, which every write takes
	dryInto       *DryRunResult // where DryRun puts its result
	err           error         // an option given a value it cannot check
}

// writeOptions is a set of write options, by the name of their With.
type writeOptions uint8

const (
	optForce writeOptions = 1 << iota
	optRevision
	optUID
	optGeneration
	optMeta
)

// names lists the With functions of the options in o.
func (o writeOptions) names() []string {
	var out []string
	for i, n := range []string{"WithForce", "WithRevision", "WithUID", "WithGeneration or WithObserved", "WithMeta"} {
		if o&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// writeOpts applies opts over cfg for the write called what, which takes
// the options in takes, and reports an option it does not take or cannot
// check.
func writeOpts(cfg *writeConfig, what string, takes writeOptions, opts []WriteOption) error {
	if len(opts) > 0 {
		applyOpts(cfg, opts)
	}
	if extra := cfg.given &^ takes; extra != 0 {
		return fmt.Errorf("%w: %s does not take %v", ErrInvalid, what, extra.names())
	}
	return cfg.err
}

// applyOpts applies opts over cfg. The options write a config of their
// own, which escapes (an option is a func value): cfg does not, so a write
// without options allocates none, and the config comes from a pool, so a
// write with options (a Loop's status apply carries WithObserved) does not
// allocate one either. No option keeps the config it is given.
func applyOpts(cfg *writeConfig, opts []WriteOption) {
	c := configPool.Get().(*writeConfig)
	*c = *cfg
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	*cfg = *c
	*c = writeConfig{} // the pool keeps nothing alive
	configPool.Put(c)
}

var configPool = sync.Pool{New: func() any { return new(writeConfig) }}

// WithGeneration makes a status write conditional on the spec it was computed
// from: the write is rejected with ErrConflict unless the stored Generation
// is g. It has moved past g when the spec changed since. Writes that did not
// change the spec (metadata, status, other managers' conditions) never make
// it fail. It is a check of the spec, not of identity: an object deleted and
// recreated under the same name starts again at generation 1, so a status
// computed for generation g of the old object lands on a successor that
// reached g too. A reconciler that writes the status it computed from a
// read passes WithObserved instead, which checks both. UpdateStatus and
// ApplyStatus take it.
func WithGeneration(g int64) WriteOption {
	return func(c *writeConfig) {
		c.generation, c.hasGeneration = g, true
		c.given |= optGeneration
	}
}

// WithObserved makes a status write conditional on the object the status was
// computed from, m being the Meta of the read (the cached object, or a Get):
// the write is rejected with ErrConflict unless the stored object has m's
// UID (it was not deleted and recreated since) and m's Generation (its spec
// did not change since). It is WithUID(m.UID) and WithGeneration(m.Generation)
// in one, so the status lands on the object and spec it describes or
// nowhere, whatever was written in between. On ErrConflict, read again and
// recompute. A Meta that no read returned (an empty UID or a zero
// Generation) makes the write fail with ErrInvalid, not pass unchecked.
// UpdateStatus and ApplyStatus take it.
func WithObserved(m Meta) WriteOption {
	// The option holds the two fields it checks, not a copy of m: a
	// Loop's status write gives one per reconcile. It is small enough to
	// inline, with no call (a Meta that no read returned is refused by
	// the option, with an error of its own type), so that the option of
	// a write given it directly, as ApplyStatus(..., WithObserved(o.Meta)),
	// lives on the caller's stack: no write keeps its options.
	uid, gen := m.UID, m.Generation
	return func(c *writeConfig) {
		c.given |= optGeneration | optUID
		if uid == "" || gen <= 0 {
			c.err = &observedError{uid: uid, gen: gen}
			return
		}
		c.uid, c.generation, c.hasGeneration = uid, gen, true
	}
}

// observedError is the ErrInvalid of WithObserved given a Meta that no
// read returned.
type observedError struct {
	uid string
	gen int64
}

func (e *observedError) Error() string {
	return fmt.Sprintf("%v: WithObserved needs the Meta of a read object (UID %q, Generation %d)", ErrInvalid, e.uid, e.gen)
}

func (e *observedError) Unwrap() error { return ErrInvalid }

// WithRevision makes a write conditional on the object's revision: it is
// rejected with ErrConflict unless the stored object is still at revision r,
// that is, nobody wrote it since the read that returned r. Delete and Apply
// take it.
func WithRevision(r int64) WriteOption {
	return func(c *writeConfig) {
		c.revision = r
		c.given |= optRevision
	}
}

// WithUID makes a write conditional on the object's identity: it is rejected
// with ErrConflict if the object called name is not the one with this UID
// (it was deleted and recreated since it was read). An empty uid adds no
// condition. Delete, UpdateStatus and ApplyStatus take it.
func WithUID(uid string) WriteOption {
	return func(c *writeConfig) {
		c.uid = uid
		c.given |= optUID
	}
}

// WithForce makes Apply and ApplyStatus take the fields they conflict on
// from their owners instead of failing with *ownership.ConflictError; the
// previous owners lose exactly those fields. UpdateStatus ignores it.
func WithForce() WriteOption {
	return func(c *writeConfig) {
		c.force = true
		c.given |= optForce
	}
}

// ApplyMeta is the metadata part of an applied configuration: the labels,
// annotations, owners and finalizers the manager wants. Like the spec, each
// entry present is claimed by the manager, and an entry it applied before and
// leaves out now is removed unless another manager owns it. Labels and
// annotations are owned key by key, finalizers one by one (a set), owners as
// a whole list.
type ApplyMeta struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owners      []OwnerRef        `json:"owners,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
}

// WithMeta adds metadata to an Apply's configuration. Without it, the apply
// claims no metadata (and releases, and so removes, metadata the manager
// applied before). Apply takes it.
func WithMeta(m ApplyMeta) WriteOption {
	return func(c *writeConfig) {
		c.meta = &m
		c.given |= optMeta
	}
}
