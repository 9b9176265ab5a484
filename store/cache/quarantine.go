package cache

import (
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/steady-go/steady/store"
)

// Quarantined returns the keys whose current value is not an object of the
// kind (a *store.DecodeError each: key, revision and why), in key order. The
// Cache skips such a value and keeps serving the rest of the kind: it
// serves the last valid object it held for the key, if any, and never
// reports the bad value to its handlers as a change, so a bad write never
// looks like a deletion. A key leaves the list when a valid value is written
// there (its handlers then see the change from the object they last saw) or
// the key is deleted (Writer.Purge deletes a value without decoding it).
func (c *Cache[S, T]) Quarantined() []*store.DecodeError {
	c.mu.RLock()
	out := make([]*store.DecodeError, 0, len(c.quarantine))
	for _, e := range c.quarantine {
		out = append(out, e)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *store.DecodeError) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// quarantineLocked records e and reports whether it is news: a key not
// quarantined before, or quarantined at another revision. The caller holds
// c.mu.
func (c *Cache[S, T]) quarantineLocked(e *store.DecodeError) bool {
	old, ok := c.quarantine[e.Name]
	c.quarantine[e.Name] = e
	return !ok || old.Revision != e.Revision
}

// reportQuarantine logs each newly quarantined value once (per key and
// revision).
func (c *Cache[S, T]) reportQuarantine(news []*store.DecodeError) {
	for _, e := range news {
		c.cfg.log.LogAttrs(context.Background(), slog.LevelWarn, "cache: value quarantined: not an object of the kind",
			slog.String("kind", e.Kind), slog.String("key", e.Key), slog.Int64("revision", e.Revision), slog.Any("error", e.Err))
	}
}
