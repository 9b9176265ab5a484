//go:build linux

package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/steady-go/steady/store"
)

// timeline prints numbered-by-time lines to one writer from any goroutine.
type timeline struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	err   error // the first write error
}

func (t *timeline) printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, err := fmt.Fprintf(t.w, "%7.3fs  %s\n", time.Since(t.start).Seconds(), fmt.Sprintf(format, args...))
	if t.err == nil {
		t.err = err
	}
}

// followInstances prints the life of every Instance object (created, marked
// for deletion, deleted, and by whom) from events, a watch of the Instances
// started before the first one is written, until the watch's ctx ends.
func followInstances(events <-chan store.Event[InstanceSpec, InstanceStatus], log func(string, ...any)) error {
	for ev := range events {
		if ev.Err != nil {
			log("store: watch ended: %v", ev.Err)
			for range events {
			}
			return nil
		}
		switch o := ev.Object; {
		case ev.Progress:
		case ev.Type == store.Added:
			log("store: Instance %s created by %s", o.Meta.Name, o.Meta.LastWrite.Manager)
		case ev.Type == store.Modified && o.Meta.DeletionRequested && !ev.Prev.Meta.DeletionRequested:
			log("store: Instance %s marked for deletion by %s (finalizer %s holds it)", o.Meta.Name, o.Meta.LastWrite.Manager, stopFinalizer)
		case ev.Type == store.Deleted:
			log("store: Instance %s deleted", o.Meta.Name)
		}
	}
	return nil
}
