package boltstore

import "time"

// Defaults of the options.
const (
	DefaultHistorySize = 10_000
	DefaultWatchBuffer = 128
	DefaultLockTimeout = time.Second
)

// Option configures a Store opened by Open.
type Option func(*config)

type config struct {
	historySize int
	watchBuffer int
	lockTimeout time.Duration
}

func newConfig(opts []Option) config {
	c := config{historySize: DefaultHistorySize, watchBuffer: DefaultWatchBuffer, lockTimeout: DefaultLockTimeout}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithHistorySize sets how many of the latest writes the file keeps in its
// history (default DefaultHistorySize). The history is what a Watch resumes
// from, also after a restart, and what a List page pinned to an older
// revision is rebuilt from. Once the history holds more than n writes, a
// background compaction removes the oldest; a Watch from, or a List pinned
// to, a revision older than the last n writes then gets store.ErrExpired.
// Each kept write costs its value and the value before it on disk. Values
// below 1 mean 1. The size may change between Opens of one file; a smaller
// size takes effect at the next compaction.
func WithHistorySize(n int) Option {
	return func(c *config) { c.historySize = max(n, 1) }
}

// WithWatchBuffer sets the capacity of a watch's channel, which is also the most
// events a watch reads out of the file at a time (default
// DefaultWatchBuffer). A receiver that stops reading costs writers nothing:
// its backlog stays in the file's history until compaction removes it,
// when its watch ends with store.ErrExpired. Values below 1 mean 1.
func WithWatchBuffer(n int) Option {
	return func(c *config) { c.watchBuffer = max(n, 1) }
}

// WithLockTimeout sets how long Open waits for another process to release the
// file (default DefaultLockTimeout). A zero or negative d tries once.
func WithLockTimeout(d time.Duration) Option {
	return func(c *config) { c.lockTimeout = d }
}
