package cache

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/steady-go/steady/internal/guard"
	"github.com/steady-go/steady/store"
)

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
// A nil h is ignored. A call of h that panics is reported (see Panics) and
// the change goes on to the other handlers: h misses it, and nothing else.
func (c *Cache[S, T]) AddHandler(h func(old, new *store.Object[S, T])) {
	if h == nil {
		return
	}
	c.dispatch.Lock()
	defer c.dispatch.Unlock()
	c.handlers = append(c.handlers, h)
	i := len(c.handlers) - 1
	c.listing.Store(true)
	defer c.listing.Store(false)
	for _, obj := range c.List(nil) {
		c.call(i, h, nil, obj)
	}
}

// notify calls the handlers on one change; the caller holds c.dispatch.
func (c *Cache[S, T]) notify(ch change[S, T]) {
	for i, h := range c.handlers {
		c.call(i, h, ch.old, ch.new)
	}
}

// call calls handler i under recovery.
func (c *Cache[S, T]) call(i int, h func(old, new *store.Object[S, T]), old, new *store.Object[S, T]) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("handler", p, true, slog.Int("handler", i))
		}
	}()
	defer guard.Catch(&p)
	h(old, new)
}

// reportPanic reports a panic of a function of the user's: at Error, to
// the Cache's logger (slog.Default without WithLogger), to the error
// handler when toHandler (not for the error handler's own panics), and in
// Panics. The caller must not hold c.mu: the error handler may read the
// Cache.
func (c *Cache[S, T]) reportPanic(what string, p *guard.Panic, toHandler bool, attrs ...slog.Attr) {
	c.panics.Add(1)
	attrs = append(attrs, slog.String("panic", guard.Describe(p.Value, guard.MaxText)), slog.String("stack", string(p.Stack)))
	c.cfg.panicLog.LogAttrs(context.Background(), slog.LevelError, "cache: "+what+" panicked", attrs...)
	if toHandler && c.cfg.onError != nil {
		c.onError(fmt.Errorf("cache: %s %w", describeAttrs(what, attrs), p)) // "cache: handler 0 panicked: ..."
	}
}

// describeAttrs names what panicked for the error handler: "handler 0",
// "index function image".
func describeAttrs(what string, attrs []slog.Attr) string {
	if len(attrs) > 0 && attrs[0].Key != "panic" {
		return what + " " + attrs[0].Value.String()
	}
	return what
}

// onError calls the error handler under recovery.
func (c *Cache[S, T]) onError(err error) {
	var p *guard.Panic
	defer func() {
		if p != nil {
			c.reportPanic("error handler", p, false)
		}
	}()
	defer guard.Catch(&p)
	c.cfg.onError(err)
}
