// Package workqueue is the work queue behind package queue, whose
// documentation is the contract. It also has what package queue keeps off
// its public API: the stamped Get and Done (GetStamped, DoneStamped, Stamp)
// through which reconcile's Loop shares its clock reads with the queue's
// metrics, so that with metrics a key costs two clock reads, one where it
// is added and one where its work ends.
package workqueue
