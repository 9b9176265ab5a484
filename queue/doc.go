// Package queue is a keyed, deduplicating work queue for level-triggered
// controllers: sources add the key of anything that may need work, and
// workers take keys, compare desired with observed state, and hand the key
// back.
//
// A key is the unit of work, not an event: adding a key that is already
// waiting does nothing, and adding a key that a worker is processing makes
// it run once more after Done, never concurrently. So a burst of ten
// thousand events about one object costs one reconcile, and no two workers
// ever reconcile the same object at once.
//
// On top of that:
//
//   - Two priorities. Add is for events, AddLow for periodic resync. A
//     resync of every key never delays an event, and, when both levels
//     are backlogged, at least one Get in 16 takes a low key, so resync is
//     never starved.
//   - Delays. AddAfter(k, d) makes k ready after d; a delayed key keeps its
//     earliest ready time, and a normal Add makes it ready at once.
//     AddRateLimited asks a backoff.Limiter for the delay, so a failing key
//     backs off per key and all failing keys together are paced; Forget
//     resets the key on success. AddLow never hurries a delayed key, so a
//     resync cannot erase a backoff.
//   - Shutdown. ShutDown stops adds; Get drains the ready keys and then
//     returns false. ShutDownWithDrain also waits, bounded by a context, for
//     keys being processed. Get also returns false when its context is done.
//   - Metrics hooks (Metrics), a name, and an injectable clock, as Options.
//   - A key that is not equal to itself (a NaN, or a value holding one)
//     would never be found again, so every add refuses it, logged once per
//     queue (see Queue).
//
// Compared with client-go's workqueue, which has the same core semantics:
// delayed adds use one timer armed only by a Get that must wait, with no
// goroutine and no channel between AddAfter and the heap; the default rate
// limiter's overall bucket has a ceiling; metrics are an interface given to
// each queue, not a global provider; and a queue holding a key costs about
// 50 bytes plus the key (about 70 while the key is delayed), with no
// allocation per add, Get or Done once it has held as many keys before.
//
// Time comes from the clock given with WithClock, the real one by default,
// and the queue works inside testing/synctest bubbles.
package queue
