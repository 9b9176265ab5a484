// Package events keeps a history of what happened to each object, like
// Kubernetes Events: the Loop and user code record events (type, reason,
// message) about an object, and a list of them, with counts and first and
// last times, is the Events section of `kubectl describe`.
//
// Events are objects of their own kind ("Event") in the store the Recorder
// is given, so every process sharing the store sees them, and they survive
// a restart on a durable backend. A repeat of an event (same object, type,
// reason, message and source) bumps its Count and Last time instead of
// adding one. The history is bounded: at most WithPerObject events per
// object (default 20) and WithTotal in all (default 10,000), the least
// recently seen going first, and an event not seen for WithTTL (default 1h)
// is deleted.
//
// Recording never blocks and never fails: Record puts the event in a
// bounded buffer (WithBuffer, default 1024) that Run writes to the store,
// merging repeats; when the buffer is full the event is dropped and counted
// (Stats.Dropped). A reconcile therefore never waits on the event store.
package events
