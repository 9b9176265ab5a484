package memstore

import (
	"github.com/steady-go/steady/internal/kvwatch"
	"github.com/steady-go/steady/internal/storeaccess"
)

// hooks is an alias so that the embedded field is unexported: what it
// carries is for the project's own packages, not the API.
type hooks = storeaccess.Hooks

// direct is the Store's kvwatch.Direct, which it offers the project's
// packages through internal/storeaccess: store/cache reads a watch on Run's
// goroutine, so a write wakes the Cache itself and not a watch goroutine
// that then wakes it.
type direct Store

var _ kvwatch.Direct = (*direct)(nil)

// WatchDirect is Watch without its goroutine, as kvwatch.Direct describes:
// the watch is the same reader of the ring (at most WithWatchBuffer events
// a Read, ErrExpired once the events it has yet to read leave the ring),
// read by its receiver, and stop takes it off the waiting list. A Read
// that reaches the store's revision returns the wake channel with its
// events, so the receiver waits without reading once more.
func (d *direct) WatchDirect(prefix string, from int64) (kvwatch.Reader, func()) {
	s := (*Store)(d)
	s.count.watches.Add(1)
	w := &watch{s: s, prefix: prefix, wake: make(chan struct{}, 1), direct: true}
	return w, func() { s.unwait(w) }
}

// Backend returns the Store.
func (d *direct) Backend() any { return (*Store)(d) }
