package reconcile

import (
	"errors"
	"time"

	"github.com/steady-go/steady/internal/syncwait"
)

// ErrNotSynced is wrapped by the error Loop.Run and manager.Manager.Run
// return when their ctx ends before the caches they wait for have synced;
// the error names the cache, how long it waited and the cache's last list
// or watch error. While it waits, a Loop logs at Warn every 30 seconds which
// source it waits for, for how long, and the source's last list or watch
// error.
var ErrNotSynced = errors.New("reconcile: ctx ended before the caches synced")

// notSynced is the error for a wait for what that ended with ctx.
func notSynced(what string, waited time.Duration, lastErr error) error {
	return syncwait.NotSynced(ErrNotSynced, what, waited, lastErr)
}
