package store

import (
	"time"

	"github.com/steady-go/steady/ownership"
)

// Object is one stored thing: identity and bookkeeping in Meta, the desired
// state in Spec, the observed state in Status, and framework-level Conditions
// that any manager may own one of by type (the Loop owns Stalled, the user's
// reconciler usually owns Ready).
//
// Spec and Status are encoded with encoding/json.
type Object[S, T any] struct {
	Meta       Meta        `json:"metadata"`
	Spec       S           `json:"spec"`
	Status     T           `json:"status"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Meta is the part of an object every layer understands without knowing its
// Spec and Status types.
type Meta struct {
	// Kind groups objects; Name is unique within a Kind. See New and
	// ValidateName for the rules.
	Kind string `json:"kind"`
	Name string `json:"name"`
	// UID is assigned by the store at creation and never changes. A deleted
	// and recreated object gets a new UID.
	UID         string            `json:"uid"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Owners      []OwnerRef        `json:"owners,omitempty"`
	Finalizers  []string          `json:"finalizers,omitempty"`
	// DeletionRequested is set by Delete on an object with finalizers; the
	// object goes when its last finalizer is removed.
	DeletionRequested bool `json:"deletionRequested,omitempty"`
	// Managed records which manager owns which fields (see package ownership).
	Managed []ManagedFields `json:"managed,omitempty"`
	// LastWrite is stamped by the store on every write.
	LastWrite LastWrite `json:"lastWrite"`
	// Generation starts at 1 and is bumped only when the Spec changes.
	Generation int64 `json:"generation"`
	// StatusGeneration counts the writes that changed the status side
	// (Status and Conditions) since creation: UpdateStatus and ApplyStatus
	// bump it. UpdateStatus compares it with the caller's read, so a status
	// write based on a stale read of status is rejected (see UpdateStatus).
	StatusGeneration int64 `json:"statusGeneration,omitempty"`
	// Revision is the backend's ModRevision of the object. It is filled in on
	// read and is not part of the encoded value.
	Revision int64 `json:"-"`
}

// OwnerRef points at an owning object. A dependent whose Controller owner is
// gone (matched by UID) is garbage collected.
type OwnerRef struct {
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Controller bool   `json:"controller,omitempty"`
}

// LastWrite says who wrote an object last, and how.
type LastWrite struct {
	Manager string `json:"manager"`
	// Op is the kind of write: ownership.OpCreate, OpUpdate,
	// OpUpdateStatus, OpApply, OpApplyStatus or OpDeleteMark.
	Op ownership.Operation `json:"op"`
	// Trace is the trace context of the write (for OpenTelemetry, a W3C
	// traceparent), so that whoever reacts to the write can link to the
	// writer's trace. It is set only by a Store made WithTraceContext.
	Trace string `json:"trace,omitempty"`
}

// ManagedFields is one manager's owned field set over one part of the object
// (the spec side, or the "status" subresource, as in Kubernetes).
type ManagedFields struct {
	Manager string `json:"manager"`
	// Operation is "Apply" or "Update".
	Operation string `json:"operation"`
	// Subresource is "" for Meta and Spec, "status" for Status and Conditions.
	Subresource string `json:"subresource,omitempty"`
	// Fields is the ownership package's compact encoding of the field set.
	Fields string `json:"fields"`
}

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// The three condition statuses.
const (
	ConditionTrue    ConditionStatus = "True"
	ConditionFalse   ConditionStatus = "False"
	ConditionUnknown ConditionStatus = "Unknown"
)

// Condition is one observation about an object, keyed by Type.
type Condition struct {
	Type   string          `json:"type"`
	Status ConditionStatus `json:"status"`
	Reason string          `json:"reason,omitempty"`
	// Message is for people; it may name paths, dependencies and errors.
	Message string `json:"message,omitempty"`
	// LastTransitionTime moves only when Status changes.
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	// ObservedGeneration is the spec generation the condition was computed from.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}
