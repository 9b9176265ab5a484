package memstore

// Default sizes of a Store's history and of a watch's buffer.
const (
	DefaultHistorySize = 10_000
	DefaultWatchBuffer = 128
)

// Option configures a Store made by New.
type Option func(*config)

type config struct {
	historySize int
	watchBuffer int
}

// WithHistorySize sets how many of the latest events the Store keeps at
// least (default DefaultHistorySize), for watches to resume from and for
// pinned List pages: a Watch from, or a List pinned to, a revision more
// than n writes old ends with ErrExpired. Values below 1 mean 1. The
// history holds on to the values it records, so its memory is up to n
// times the typical value size.
//
// A running watch that falls behind keeps the events it has yet to read
// beyond n, up to as many as the Store holds keys, and gives them back
// once it has read them or ended: a writer that runs ahead of a store/cache
// Cache for a while costs the Cache a replay of the writes, not a relist
// of its kind. Only a watch further behind than the key count ends with
// ErrExpired, when relisting (one listing of every key, which a Cache
// decodes only where it changed) costs its receiver less than replaying.
// So the memory a lagging watch holds is at most one event (one old value)
// per key, and only while it lags.
func WithHistorySize(n int) Option {
	return func(c *config) { c.historySize = max(n, 1) }
}

// WithWatchBuffer sets the capacity of a watch's channel, which is also the most
// events a watch copies out of the history at a time (default
// DefaultWatchBuffer): a watch holds at most twice this many events of its
// own. The rest of its backlog stays in the shared history ring, so a slow
// receiver costs writers nothing: its watch ends with ErrExpired only once it
// falls further behind than WithHistorySize describes. Values below 1 mean 1.
func WithWatchBuffer(n int) Option {
	return func(c *config) { c.watchBuffer = max(n, 1) }
}
