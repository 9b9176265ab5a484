// Package backoff decides how long a failed unit of work waits before it is
// retried.
//
// Three pieces compose:
//
//   - Policy is capped exponential backoff with jitter, a pure function from
//     an attempt number to a delay. DefaultPolicy starts at 10ms, doubles,
//     spreads each delay by ±20% and caps it at 2 minutes.
//   - PerKey is a Limiter that counts consecutive failures per key and
//     applies a Policy, so one broken object backs off without slowing the
//     others. Forget resets a key when it succeeds.
//   - Bucket is a Limiter that paces all retries together with a token bucket
//     from golang.org/x/time/rate (default 10/s, burst 100). It has a
//     ceiling: past it, the reservation is cancelled, so a storm of failures
//     cannot push the bucket into unbounded debt, and the delay is spread
//     over [0.8·Ceiling, Ceiling] so capped keys do not return in one burst.
//
// Max combines limiters by taking the longest delay, and NewDefault returns
// PerKey(DefaultPolicy()) combined with a default Bucket, the limiter steady's
// queue and reconcile loops use when given none. Retry applies the same rule
// for a caller that counts each key's failures itself, as the reconcile Loop
// does.
//
// Compared with client-go's workqueue rate limiters, which play the same
// role: the per-key cap is 2 minutes rather than 1000 seconds, any attempt
// number is overflow-safe, and the overall bucket has a ceiling, where
// client-go's would queue the last of 10,000 simultaneous failures for about
// 16 minutes. Bad configuration is reported by the constructors as an error
// wrapping ErrInvalidConfig, never by a later panic.
//
// Everything here is safe for concurrent use. Time comes from an injectable
// clock, and the real clock works inside testing/synctest bubbles.
package backoff
