// Package fastdelay computes backoff.Policy's delays on the hot paths that
// run them once per failure: backoff.PerKey and the queue's own per-key
// backoff. backoff documents the delays; this package only computes them
// faster, with the same floating-point steps, so its results are the same
// durations bit for bit (its tests check that against backoff.Policy.Delay).
//
//   - Doubling is a Policy with Factor 2 (DefaultPolicy's, and client-go's),
//     whose Factor^attempt is a power of two built from its exponent bits
//     rather than multiplied out, and whose capped attempts are known in
//     advance, so a capped delay needs no random draw.
//   - Source is a small random generator for jitter, advanced under a lock
//     its owner already holds: no shared lock and no allocation per draw.
package fastdelay
