// Package fastdelay computes backoff.Policy's delays, for Policy.Delay and
// for the hot paths that run them once per failure: backoff.PerKey and the
// queue's own per-key backoff. backoff documents the delays; this package
// holds their one implementation, and a faster one for Factor 2 that gives
// the same durations bit for bit (its tests check that against
// backoff.Policy.Delay).
//
//   - Exp is Policy.Delay for any valid policy.
//   - Doubling is a Policy with Factor 2 (DefaultPolicy's, and client-go's),
//     whose Factor^attempt is a power of two built from its exponent bits
//     rather than multiplied out, and whose capped attempts are known in
//     advance, so a capped delay needs no random draw.
//   - Delays is what both hot paths hold: one policy's Doubling or Exp, with
//     the jitter drawn from a Source of its own when the policy has no Rand.
//   - Source is a small random generator for jitter, advanced under a lock
//     its owner already holds: no shared lock and no allocation per draw.
package fastdelay
