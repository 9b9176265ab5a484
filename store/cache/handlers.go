package cache

import "github.com/steady-go/steady/store"

// AddHandler registers h to be told of every change to the Cache: h(nil,
// obj) for an addition, h(old, new) for a modification, h(old, nil) for a
// deletion, whether the change came from the watch or from a relist. It
// first replays every object already cached as an addition, so a handler
// added at any time sees each object's history from its current state on,
// once and in order.
//
// Handlers run one at a time on Run's goroutine, after the Cache shows the
// change, so they must be quick (typically they enqueue a key) and must not
// call AddHandler or wait for the Cache to advance (WaitFor). They may call
// the Cache's read methods. The objects are shared and must not be modified.
// A nil h is ignored.
func (c *Cache[S, T]) AddHandler(h func(old, new *store.Object[S, T])) {
	if h == nil {
		return
	}
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.handlers = append(c.handlers, h)
	for _, obj := range c.List(nil) {
		h(nil, obj)
	}
}

// notify calls the handlers on one change; the caller holds c.dispatch.
func (c *Cache[S, T]) notify(ch change[S, T]) {
	for _, h := range c.handlers {
		h(ch.old, ch.new)
	}
}
