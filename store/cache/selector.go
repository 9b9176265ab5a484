package cache

import (
	"fmt"
	"strings"

	"github.com/steady-go/steady/internal/nilness"
	"github.com/steady-go/steady/store"
)

// FieldSelector chooses objects by fields of their metadata, as
// Kubernetes' field selectors do. Every field set must match; the zero
// value chooses every object.
type FieldSelector struct {
	// Name keeps the object of that name only.
	Name string
	// NamePrefix keeps the objects whose name starts with it (a name
	// prefix is steady's namespace: "team-a.").
	NamePrefix string
	// OwnerUID keeps the objects that name an owner of that UID among
	// Meta.Owners (the children of one object).
	OwnerUID string
}

// matches reports whether m is chosen.
func (f FieldSelector) matches(m *store.Meta) bool {
	return f.matchesName(m.Name) && (f.OwnerUID == "" || ownedBy(m, f.OwnerUID))
}

func (f FieldSelector) matchesName(name string) bool {
	return (f.Name == "" || name == f.Name) && strings.HasPrefix(name, f.NamePrefix)
}

func ownedBy(m *store.Meta, uid string) bool {
	for _, o := range m.Owners {
		if o.UID == uid {
			return true
		}
	}
	return false
}

// WithSelector limits the Cache to the objects whose labels match labels
// (nil: any labels) and whose metadata matches fields, as a client-go
// informer with a label and a field selector (controller-runtime's
// cache.Options.ByObject) is limited. The Cache then holds, serves, indexes
// and reports only those objects:
//
//   - an object that stops matching (a label removed, say) leaves the Cache
//     and reaches the handlers as a deletion, h(old, nil), as in client-go;
//     one that starts matching arrives as an addition;
//   - the filtering happens as far upstream as it can: the listing asks the
//     ListWatcher for the label selector and for a name prefix (Name, or
//     NamePrefix), which a *store.Store turns into a Backend key prefix, so
//     keys outside it are never read, let alone decoded; the watch delivers
//     the whole kind, and the Cache drops what does not match on arrival,
//     before it is stored (or transformed), as it does for anything a
//     ListWatcher returns that does not match;
//   - undecodable values are quarantined only when their name matches.
//
// Whoever reads the Cache sees an object outside the selection as absent: a
// reconcile Loop over a selected Cache takes an object that leaves it for
// a deleted one (as controller-runtime's does), so select what the Loop
// owns (a shard, a team's names), not a state objects pass through.
//
// A selector that matches nothing leaves the Cache empty and synced: not
// an error. A Name or NamePrefix with a "/" (which no name has), or a typed
// nil labels (a nil pointer), makes Run fail with ErrInvalid.
func WithSelector(labels store.Selector, fields FieldSelector) Option {
	return func(c *config) { c.labels, c.fields = labels, fields }
}

// validateSelector checks WithSelector's fields.
func (c *config) validateSelector() error {
	if c.labels != nil && nilness.IsNil(c.labels) {
		return fmt.Errorf("%w: nil cache label selector (%T)", store.ErrInvalid, c.labels)
	}
	if strings.Contains(c.fields.Name, "/") || strings.Contains(c.fields.NamePrefix, "/") {
		return fmt.Errorf("%w: cache field selector name %q or prefix %q contains a /", store.ErrInvalid, c.fields.Name, c.fields.NamePrefix)
	}
	return nil
}

// selecting reports whether WithSelector limits the Cache.
func (c *config) selecting() bool {
	return c.labels != nil || c.fields != FieldSelector{} || c.keep != nil
}

// selects reports whether the Cache keeps obj.
func (c *Cache[S, T]) selects(obj *store.Object[S, T]) bool {
	return (c.cfg.labels == nil || c.cfg.labels.Matches(obj.Meta.Labels)) && c.cfg.fields.matches(&obj.Meta) && c.keeps(obj.Meta.Name)
}

// listOptions are the first page's options of a listing: WithSelector's
// label selector and name prefix go to the ListWatcher.
func (c *Cache[S, T]) listOptions() store.ListOptions {
	f := c.cfg.fields
	prefix := f.NamePrefix
	if f.Name != "" && strings.HasPrefix(f.Name, prefix) {
		prefix = f.Name
	}
	return store.ListOptions{Limit: c.cfg.pageSize, Selector: c.cfg.labels, NamePrefix: prefix, Keep: c.keepFunc()}
}
