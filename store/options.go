package store

import "fmt"

// StatusOption refines UpdateStatus (and ApplyStatus).
type StatusOption interface{ applyStatus(*statusConfig) }

// ApplyOption refines Apply.
type ApplyOption interface{ applyApply(*applyConfig) }

// DeleteOption refines Delete.
type DeleteOption interface{ applyDelete(*deleteConfig) }

type statusConfig struct {
	generation    int64
	hasGeneration bool
	force         bool
	uid           string
	err           error // an option given a value it cannot check
}

type deleteConfig struct {
	revision int64
	uid      string
}

// IfGeneration makes a status write conditional on the spec it was computed
// from: the write is rejected with ErrConflict unless the stored Generation
// is g. It has moved past g when the spec changed since. Writes that did not
// change the spec (metadata, status, other managers' conditions) never make
// it fail. It is a check of the spec, not of identity: an object deleted and
// recreated under the same name starts again at generation 1, so a status
// computed for generation g of the old object lands on a successor that
// reached g too. A reconciler that writes the status it computed from a
// read passes IfObserved instead, which checks both.
func IfGeneration(g int64) StatusOption { return generationOption(g) }

// IfObserved makes a status write conditional on the object the status was
// computed from, m being the Meta of the read (the cached object, or a Get):
// the write is rejected with ErrConflict unless the stored object has m's
// UID (it was not deleted and recreated since) and m's Generation (its spec
// did not change since). It is IfUID(m.UID) and IfGeneration(m.Generation)
// in one, so the status lands on the object and spec it describes or
// nowhere, whatever was written in between. On ErrConflict, read again and
// recompute. A Meta that no read returned (an empty UID or a zero
// Generation) makes the write fail with ErrInvalid, not pass unchecked.
func IfObserved(m Meta) StatusOption { return observedOption{uid: m.UID, generation: m.Generation} }

// observedOption is the option IfObserved returns.
type observedOption struct {
	uid        string
	generation int64
}

func (o observedOption) applyStatus(c *statusConfig) {
	if o.uid == "" || o.generation <= 0 {
		c.err = fmt.Errorf("%w: IfObserved needs the Meta of a read object (UID %q, Generation %d)", ErrInvalid, o.uid, o.generation)
		return
	}
	c.uid, c.generation, c.hasGeneration = o.uid, o.generation, true
}

type generationOption int64

func (g generationOption) applyStatus(c *statusConfig) {
	c.generation, c.hasGeneration = int64(g), true
}

// IfRevision makes a write conditional on the object's revision: it is
// rejected with ErrConflict unless the stored object is still at revision r,
// that is, nobody wrote it since the read that returned r. It applies to
// Delete (and Apply).
func IfRevision(r int64) revisionOption { return revisionOption(r) }

// revisionOption is the option IfRevision returns.
type revisionOption int64

func (r revisionOption) applyDelete(c *deleteConfig) { c.revision = int64(r) }
func (r revisionOption) applyApply(c *applyConfig)   { c.revision = int64(r) }

// IfUID makes a Delete, UpdateStatus or ApplyStatus conditional on the
// object's identity: it is rejected with ErrConflict if the object called
// name is not the one with this UID (it was deleted and recreated since it
// was read). An empty uid adds no condition.
func IfUID(uid string) uidOption { return uidOption(uid) }

// uidOption is the option IfUID returns.
type uidOption string

func (u uidOption) applyDelete(c *deleteConfig) { c.uid = string(u) }
func (u uidOption) applyStatus(c *statusConfig) { c.uid = string(u) }

type applyConfig struct {
	force    bool
	revision int64
	meta     *ApplyMeta
}

// Force makes Apply and ApplyStatus take the fields they conflict on from
// their owners instead of failing with *ownership.ConflictError; the previous
// owners lose exactly those fields. UpdateStatus ignores it.
func Force() forceOption { return forceOption{} }

// forceOption is the option Force returns.
type forceOption struct{}

func (forceOption) applyApply(c *applyConfig)   { c.force = true }
func (forceOption) applyStatus(c *statusConfig) { c.force = true }

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
// applied before).
func WithMeta(m ApplyMeta) ApplyOption { return metaOption{m} }

type metaOption struct{ m ApplyMeta }

func (o metaOption) applyApply(c *applyConfig) { c.meta = &o.m }
