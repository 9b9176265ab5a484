package kubefake

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// watchBuffer is the capacity of a watch's channel: the tracker's watch
// default (watch.DefaultChanSize), so that a watch whose informer keeps up
// costs what the tracker's did.
const watchBuffer = 100

// watcher is a watch of the APIServer's Apps. Unlike the tracker's watch,
// whose channel must hold every event the informer may fall behind by (it
// panics when full), it holds what its informer has yet to read, no more:
// a writer sends an event on the channel while there is room, and queues
// it once there is none, for a goroutine that runs only while the queue is
// not empty, and sends the queue on in order. The tracker's watch sized
// for a run's every event (two per update) was a preallocated buffer of
// 32 bytes an event, 3.2 MB at 50,000 updates, live from the start and
// doubled in the peak heap by the GC's slack: client-go's side's heap grew
// with the length of the run, not with its backlog.
type watcher struct {
	result chan watch.Event
	mu     sync.Mutex
	queue  []watch.Event // events for the goroutine to send, in order
	// sending: the goroutine runs; every event goes to queue until it
	// finds the queue empty, so that none passes those queued.
	sending bool
	stopped bool
	stop    chan struct{} // closed by Stop
	removed func()        // takes the watcher off the APIServer's list; idempotent
}

func newWatcher(removed func()) *watcher {
	return &watcher{result: make(chan watch.Event, watchBuffer), stop: make(chan struct{}), removed: removed}
}

// ResultChan returns the watch's events, closed once the watch stopped.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch: its events not yet received are dropped.
func (w *watcher) Stop() {
	// Before w.mu: a writer holds the APIServer's lock and then takes w.mu.
	w.removed()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.stopped = true
	close(w.stop)
	if !w.sending {
		close(w.result)
	} // else the goroutine closes it on its way out
}

// modified sends the event of a write of obj, never blocking the writer.
func (w *watcher) modified(obj runtime.Object) {
	ev := watch.Event{Type: watch.Modified, Object: obj}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if !w.sending {
		select {
		case w.result <- ev:
			return
		default:
		}
		w.sending = true
		go w.send()
	}
	w.queue = append(w.queue, ev)
}

// send sends the queue on until it finds it empty, or the watch stops.
func (w *watcher) send() {
	for {
		w.mu.Lock()
		batch := w.queue
		// The queue's array is let go with the batch: a backlog's
		// memory lasts as long as the backlog.
		w.queue = nil
		if len(batch) == 0 || w.stopped {
			w.sending = false
			if w.stopped {
				close(w.result)
			}
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	batch:
		for i := range batch {
			select {
			case w.result <- batch[i]:
				batch[i] = watch.Event{} // received: the informer holds it now
			case <-w.stop:
				break batch
			}
		}
	}
}
