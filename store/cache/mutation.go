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
type mutationDetector[S, T any] struct {
	snaps map[string][]byte
}

func newMutationDetector[S, T any]() *mutationDetector[S, T] {
	return &mutationDetector[S, T]{snaps: make(map[string][]byte)}
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
	snap, ok := d.snaps[name]
	if !ok || snap == nil {
		return errs
	}
	if !bytes.Equal(snap, encodeForDetector(obj)) {
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
	if old != nil {
		errs = d.verify(name, old, errs)
	}
	if new == nil {
		delete(d.snaps, name)
	} else {
		d.snaps[name] = encodeForDetector(new)
	}
	return errs
}
