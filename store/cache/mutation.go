package cache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/steady-go/steady/store"
)

// MutationError reports a cached object that a caller modified. Cached
// objects are shared: copy one before changing it.
type MutationError struct {
	// Name is the modified object's name; Revision is the revision the
	// Cache served it at.
	Name     string
	Revision int64
}

func (e *MutationError) Error() string {
	return fmt.Sprintf("cache: object %q (revision %d) was modified by a caller; "+
		"objects served by a Cache are shared and read-only, copy one before changing it", e.Name, e.Revision)
}

// Check compares every cached object with the copy the mutation detector
// took when the Cache stored it, and returns a *MutationError for each
// modified one (joined with errors.Join, in name order), or nil. It returns
// nil when the detector is off.
func (c *Cache[S, T]) Check() error {
	c.mu.RLock()
	var errs []error
	for name, obj := range c.items {
		errs = c.detect.verify(name, obj, errs)
	}
	c.mu.RUnlock()
	slices.SortFunc(errs, func(a, b error) int {
		return strings.Compare(a.(*MutationError).Name, b.(*MutationError).Name)
	})
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// mutationDetector keeps the encoding of every object the Cache serves. A
// nil *mutationDetector is off: its methods do nothing.
//
// Each snapshot is held by pointer, so that replace, for every event,
// finds a name's snapshot with one lookup and overwrites it in place,
// rather than look it up to verify and again to store the next.
type mutationDetector[S, T any] struct {
	snaps map[string]*snapshot
}

// snapshot is the encoding of the object the Cache serves under a name
// (encodeForDetector); enc is nil for one that did not encode.
type snapshot struct{ enc []byte }

func newMutationDetector[S, T any]() *mutationDetector[S, T] {
	return &mutationDetector[S, T]{snaps: make(map[string]*snapshot)}
}

// encodeForDetector encodes everything a caller could change, Revision
// included (it is not part of the JSON encoding). An object that does not
// encode is not checked.
func encodeForDetector[S, T any](obj *store.Object[S, T]) []byte {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return fmt.Appendf(b, "@%d", obj.Meta.Revision)
}

// verify appends a *MutationError to errs if obj differs from its copy.
func (d *mutationDetector[S, T]) verify(name string, obj *store.Object[S, T], errs []error) []error {
	if d == nil {
		return errs
	}
	return verifySnapshot(d.snaps[name], name, obj, errs)
}

// verifySnapshot appends a *MutationError to errs if obj differs from s,
// which may be nil (no copy: nothing to check).
func verifySnapshot[S, T any](s *snapshot, name string, obj *store.Object[S, T], errs []error) []error {
	if s == nil || s.enc == nil {
		return errs
	}
	if !bytes.Equal(s.enc, encodeForDetector(obj)) {
		errs = append(errs, &MutationError{Name: name, Revision: obj.Meta.Revision})
	}
	return errs
}

// replace verifies old, the value the Cache is dropping, and takes a copy
// of new, the value it now serves.
func (d *mutationDetector[S, T]) replace(name string, old, new *store.Object[S, T], errs []error) []error {
	if d == nil {
		return errs
	}
	snap := d.snaps[name]
	if old != nil {
		errs = verifySnapshot(snap, name, old, errs)
	}
	switch {
	case new == nil:
		if snap != nil {
			delete(d.snaps, name)
		}
	case snap != nil:
		snap.enc = encodeForDetector(new)
	default:
		d.snaps[name] = &snapshot{enc: encodeForDetector(new)}
	}
	return errs
}
