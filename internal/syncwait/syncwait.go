// Package syncwait is how a Loop and a Manager wait for caches and sources
// to sync: reporting at Warn while they wait, naming what they wait for, and
// treating a panic of the user's WaitForSync as an error.
package syncwait

import (
	"context"
	"fmt"
	"time"

	"github.com/steady-go/steady/clock"
	"github.com/steady-go/steady/internal/guard"
)

// Every is how often a Loop or Manager waiting for a cache to sync logs, at
// Warn, which cache it waits for, for how long, and the cache's last list or
// watch error.
const Every = 30 * time.Second

// lastErrorer is implemented by caches and cache sources that can say why
// they have not synced (*cache.Cache and the cache sources of reconcile).
type lastErrorer interface{ LastError() error }

// LastError returns v's last list or watch error, or nil; nil too when
// LastError panics (v may be the user's).
func LastError(v any) (err error) {
	if le, ok := v.(lastErrorer); ok {
		var p *guard.Panic
		defer guard.Catch(&p)
		return le.LastError()
	}
	return nil
}

// Describe names a source or cache for a log line or an error: its String
// if it has one (and it does not panic), else its type.
func Describe(v any) (name string) {
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

// Wait calls wait(ctx) and, every Every until it returns,
// report with the time waited so far. It returns wait's error; a wait that
// panics (a source's or cache's WaitForSync: the user's) returns the
// panic, a *guard.Panic, as its error.
func Wait(ctx context.Context, clk clock.Clock, wait func(context.Context) error, report func(waited time.Duration)) error {
	start := clk.Now()
	done := make(chan error, 1)
	go func() {
		var err error
		if p := guard.Call(func() { err = wait(ctx) }); p != nil {
			err = p
		}
		done <- err
	}()
	t := clk.NewTimer(Every)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C():
			report(clk.Now().Sub(start))
			t.Reset(Every)
		}
	}
}

// Why returns what an error for a wait that ended with wait's error err
// should name: err itself when it says more than ctx's error does (a Cache
// whose Run has not been called says so), else lastErr, the cache's last
// list or watch error.
func Why(ctx context.Context, err, lastErr error) error {
	if err != nil && err != ctx.Err() {
		return err
	}
	return lastErr
}

// NotSynced is the error, wrapping notSynced, for a wait for what that
// ended with ctx after waited; it names lastErr, the cache's last list or
// watch error, if any.
func NotSynced(notSynced error, what string, waited time.Duration, lastErr error) error {
	if lastErr != nil {
		return fmt.Errorf("%w: %s, after %v; last error: %w", notSynced, what, waited.Round(time.Millisecond), lastErr)
	}
	return fmt.Errorf("%w: %s, after %v", notSynced, what, waited.Round(time.Millisecond))
}
