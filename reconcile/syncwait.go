package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/guard"
)

// ErrNotSynced is wrapped by the error Loop.Run and Manager.Run return when
// their ctx ends before the caches they wait for have synced; the error
// names the cache, how long it waited and the cache's last list or watch
// error.
var ErrNotSynced = errors.New("reconcile: ctx ended before the caches synced")

// SyncWaitReport is how often a Loop or Manager waiting for a cache to sync
// logs, at Warn, which cache it waits for, for how long, and the cache's
// last list or watch error.
const SyncWaitReport = 30 * time.Second

// lastErrorer is implemented by caches and cache sources that can say why
// they have not synced (*cache.Cache and the cache sources of this package).
type lastErrorer interface{ LastError() error }

// lastError returns v's last list or watch error, or nil; nil too when
// LastError panics (v may be the user's).
func lastError(v any) (err error) {
	if le, ok := v.(lastErrorer); ok {
		var p *guard.Panic
		defer guard.Catch(&p)
		return le.LastError()
	}
	return nil
}

// describe names a source or cache for a log line or an error: its String
// if it has one (and it does not panic), else its type.
func describe(v any) (name string) {
	if s, ok := v.(fmt.Stringer); ok {
		var p *guard.Panic
		defer func() {
			if p != nil {
				name = fmt.Sprintf("%T", v)
			}
		}()
		defer guard.Catch(&p)
		return s.String()
	}
	return fmt.Sprintf("%T", v)
}

// waitSync calls wait(ctx) and, every SyncWaitReport until it returns,
// report with the time waited so far. It returns wait's error; a wait that
// panics (a source's or cache's WaitForSync: the user's) returns the
// panic, a *guard.Panic, as its error.
func waitSync(ctx context.Context, clk clock.Clock, wait func(context.Context) error, report func(waited time.Duration)) error {
	start := clk.Now()
	done := make(chan error, 1)
	go func() {
		var err error
		if p := guard.Call(func() { err = wait(ctx) }); p != nil {
			err = p
		}
		done <- err
	}()
	t := clk.NewTimer(SyncWaitReport)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C():
			report(clk.Now().Sub(start))
			t.Reset(SyncWaitReport)
		}
	}
}

// notSynced is the error for a wait for what that ended with ctx.
func notSynced(what string, waited time.Duration, lastErr error) error {
	if lastErr != nil {
		return fmt.Errorf("%w: %s, after %v; last error: %w", ErrNotSynced, what, waited.Round(time.Millisecond), lastErr)
	}
	return fmt.Errorf("%w: %s, after %v", ErrNotSynced, what, waited.Round(time.Millisecond))
}
