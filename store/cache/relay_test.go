package cache_test

import (
	"context"

	"github.com/steady-go/steady/store"
)

// relayWatch starts a watch from revision from and relays its events
// through each, which returns the event to deliver, whether to deliver it,
// and whether the watch goes on after it. The test sources that lose or
// end watches on purpose are built on it. The relayed watch ends when each
// says so, when the watch it relays ends, or when ctx does; that watch is
// cancelled and drained either way.
func relayWatch(ctx context.Context, watch func(context.Context, int64) (<-chan store.Event[cacheSpec, cacheStatus], error), from int64,
	each func(store.Event[cacheSpec, cacheStatus]) (ev store.Event[cacheSpec, cacheStatus], deliver, more bool),
) (<-chan store.Event[cacheSpec, cacheStatus], error) {
	ctx, cancel := context.WithCancel(ctx)
	in, err := watch(ctx, from)
	if err != nil {
		cancel()
		return nil, err
	}
	out := make(chan store.Event[cacheSpec, cacheStatus])
	go func() {
		defer close(out)
		defer func() {
			cancel()
			for range in {
			}
		}()
		for ev := range in {
			ev, deliver, more := each(ev)
			if deliver {
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
			if !more {
				return
			}
		}
	}()
	return out, nil
}
