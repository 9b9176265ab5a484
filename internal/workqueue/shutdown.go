package workqueue

import (
	"context"
	"fmt"
)

// ShutDown stops the queue for good. Later adds of every kind are ignored,
// and delayed keys are dropped. Keys already ready stay: Get keeps handing
// them out until none is left, then returns false, and blocked Gets wake up
// to do so. Keys processing may still be handed back with Done, which
// queues any rerun recorded before ShutDown. ShutDown does not wait for
// keys (ShutDownWithDrain does), only for the queue's metrics goroutine to
// end; calling it again does nothing.
func (q *Queue[K]) ShutDown() {
	q.shutDown()
	if q.m != nil {
		<-q.m.stopped
	}
}

func (q *Queue[K]) shutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	q.shutdown = true
	close(q.notify) // wakes every blocked Get
	if q.m != nil {
		close(q.m.stop)
	}
	for len(q.delay.heap) > 0 {
		n := q.delay.heap[len(q.delay.heap)-1].node
		q.heapRemove(n)
		if nd := q.keys.at(n); nd.state == 0 && nd.failures == 0 {
			q.keys.remove(n)
		}
	}
	if q.delay.timer != nil {
		q.delay.timer.Stop()
		q.delay.armed = false
	}
	if q.m != nil {
		q.m.hooks.Depth(q.normal.n + q.low.n)
	}
}

// ShutDownWithDrain is ShutDown, and then waits until no key is in flight:
// every key handed out by Get has been handed back with Done. It returns
// nil then, or, if ctx is done first, an error that says how many keys were
// still processing and wraps ctx's cause. Keys still ready when it returns
// stay for Get; a caller that wants them processed too keeps its workers
// calling Get until it returns false.
func (q *Queue[K]) ShutDownWithDrain(ctx context.Context) error {
	q.ShutDown()
	q.mu.Lock()
	if q.inFlight == 0 {
		q.mu.Unlock()
		return nil
	}
	if q.drained == nil {
		q.drained = make(chan struct{})
	}
	ch := q.drained
	q.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		n := q.inFlight
		q.mu.Unlock()
		if n == 0 {
			return nil
		}
		return fmt.Errorf("queue: shut down with %d keys still processing: %w", n, context.Cause(ctx))
	}
}
