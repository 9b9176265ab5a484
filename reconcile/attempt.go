package reconcile

import "context"

// Attempt returns which attempt the reconcile of ctx is: 1 for a key with no
// failures behind it, n+1 after n consecutive failures (the number the Loop
// logs as "attempt"). It is 0 for a ctx that does not come from a Loop. A
// tracing wrapper of the Reconciler reads it to label its span.
func Attempt(ctx context.Context) int {
	r, ok := ctx.Value(recorderKey{}).(*recorder)
	if !ok {
		return 0
	}
	return r.attempt
}
