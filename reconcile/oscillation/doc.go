// Package oscillation detects a manager that keeps writing an object without
// converging: a Fight over a field with another manager, or writes that make
// No Progress. It is the pure core behind the reconcile Loop's Oscillating
// reports: a Detector reads no clock and does no I/O (time comes in with each
// Write), so any sequence of writes is a plain test input.
//
// The Loop keeps one Detector per object it writes, feeds it the writes its
// cache source sees (judged by field ownership from the point of view of the
// Loop's field manager), and turns each Report into a Stalled condition with
// reason Oscillating, an Error log and a metric, except a Throttled one (the
// status budget spent), which holds the key all the same but is a Warn log
// and a metric, never Stalled. Users meet this package in
// the Loop's option (reconcile.WithOscillation takes a Config), in
// Loop.Inspect (a *Report) and in the metrics.Loop hook (a Kind).
//
// Paths are diff.Path values in the path space of the object's managed
// fields (.metadata.labels.app, .spec.replicas, .status.phase,
// .conditions[type="Ready"].status); a Report's Message renders them with
// Path.String.
package oscillation
