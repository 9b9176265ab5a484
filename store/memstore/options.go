package memstore

// Default sizes of a Store's history and of a watch's buffer.
const (
	DefaultHistorySize  = 2048
	DefaultHistoryBytes = 16 << 20
	DefaultWatchBuffer  = 128
)

// Option configures a Store made by New.
type Option func(*config)

type config struct {
	historySize  int
	historySet   bool // WithHistorySize was given: the window does not grow
	historyBytes int
	bytesSet     bool // WithHistoryBytes was given: the budget does not grow
	watchBuffer  int
	agingLag     int64 // 0: defaultAgingLag (tests set it)
	settleOff    bool  // the default window never shrinks (tests set it)
}

// WithHistorySize sets how many of the latest events the Store keeps for watches
// to resume from and for pinned List pages (by default DefaultHistorySize
// up to 20,480 keys, then 10,000, or a tenth as many as the Store holds
// keys when that is more: the window grows, by doubling, with the keys,
// and never shrinks below that; it also doubles while a live watch is
// about to fall out of it, and shrinks back as the watches catch up: see
// below). A
// Watch from, or a List pinned to, a revision more than n writes old ends
// with ErrExpired. Values below 1 mean 1. The history holds on to the values
// it records, in full (shared with the keys where current) while they fit
// WithHistoryBytes; past that, the oldest events' old values, all but the
// latest 1,024 events', are kept as deltas against the key's next value,
// which is small when a write changes a few fields of a large value (47
// bytes between two of the fleet demo's 880-byte status writes), and the
// size of the value when it changes throughout.
//
// n is the watch window: a watcher that falls n writes behind relists. For
// a store/cache Cache that costs one listing of its kind, but no decoding
// of the objects it already holds at their stored revision (only those
// written meanwhile are decoded); a burst of n writes replayed from the
// history costs n decodes, more than the relist of a kind with fewer than
// n objects. A relist of many objects lists, if it does not decode, all
// of them, so the default window grows with the keys: at 1M objects and a
// fixed 10,000-write window, a controller's cache whose writer ran ahead
// relisted again and again (its relists lasted longer than the window)
// and spent half its CPU listing. And a watch that merely lags is not
// expired by the default window: while a live watch has more than seven
// eighths of the window yet to read, the window doubles, up to as many
// writes as the Store holds keys and eight times what the keys call for
// (80,000 writes at 100,000 keys, 1M at 1M; 10,000 at 10,000), and the
// budget of WithHistoryBytes with it once past 10,000 writes, so its
// memory, 104 bytes of ring per write plus the old value it holds, is
// spent only once a watch lagged that far (at 1M keys, at most ~100 MB of
// ring and 1.6 GiB of values; the window the keys call for, 160,000
// writes, holds up to 256 MiB of values in full), and only until the
// watches catch up: the window then shrinks back to its size at rest,
// keeping what a live watch has yet to read and what a listing pinned to
// a revision still needs, and grows again as far for a watch that lags
// again. A controller's cache whose writer ran ahead
// of it fell ~28,000 writes behind at 100,000 keys and relisted two or
// three times in a five-second run; now it relists none. A watch further
// behind than the keys relists, which costs less than replaying its
// backlog (at 10,000 keys and ~14,000 writes behind, a cache kept from
// relisting took ~20% more CPU per event). So the default window at rest
// of a small Store need not hold a burst: it was 10,000 writes below
// 100,000 keys, and at 10,000 keys their old values (one a write, mostly)
// were a sixth of a controller's heap, 5 of 28 MiB, where client-go's
// informer holds none; at 2,048 the same run holds 23 MiB, and a burst
// grows it as far as before. A window set here stays as set: raise it
// when a kind holds many more objects than the writes a cache may fall
// behind by, at the memory of one old value per write kept.
func WithHistorySize(n int) Option {
	return func(c *config) { c.historySize, c.historySet = max(n, 1), true }
}

// WithHistoryBytes sets how many bytes of values the history may hold in
// full (default DefaultHistoryBytes, 16 MiB) before it keeps old values as
// deltas (see WithHistorySize). A value counts once per event that records
// it, current or not. Under the budget a write encodes nothing; over it,
// each write encodes deltas for the oldest events, all but the latest 1,024,
// until the history fits the budget again or no older event is left, so a
// history of large values whose writes change them throughout may stay
// over it. 0 keeps every old value but the latest 1,024 events' as a delta
// whatever the size; values below 0 mean 0. Without this option the budget
// grows in proportion as the default window grows past 10,000 writes, with
// the keys or for a lagging watch (see WithHistorySize), so that the
// window's writes encode no deltas: ageing a window grown for a lagging
// watch cost a controller ~13% of its CPU at 100,000 keys, more than the
// relists the window saved, and ageing the 160,000-write window of 1M keys
// ~20% of its CPU per event.
func WithHistoryBytes(n int) Option {
	return func(c *config) { c.historyBytes, c.bytesSet = max(n, 0), true }
}

// WithWatchBuffer sets the capacity of a watch's channel, which is also the most
// events a watch copies out of the history at a time (default
// DefaultWatchBuffer): a watch holds at most twice this many events of its
// own. The rest of its backlog stays in the shared history ring, so a slow
// receiver costs writers nothing until it falls WithHistorySize writes behind,
// when its watch ends with ErrExpired. Values below 1 mean 1.
func WithWatchBuffer(n int) Option {
	return func(c *config) { c.watchBuffer = max(n, 1) }
}
