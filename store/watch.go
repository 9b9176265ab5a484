package store

// Event is one change to a typed object, delivered by Store.Watch.
type Event[S, T any] struct {
	// Type is Added, Modified or Deleted (zero for a Progress or error event).
	Type EventType
	// Object is the object after the change; for Deleted, its last state.
	// It carries Meta.LastWrite and Meta.Revision.
	Object *Object[S, T]
	// Prev is the object before the change, nil for Added.
	Prev *Object[S, T]
	// Revision is the store revision of the change or progress mark.
	Revision int64
	// Progress marks a notification that every change up to Revision has
	// been delivered; Object is nil.
	Progress bool
	// Err is set on the final event of a watch that failed; it wraps
	// ErrExpired when the caller must relist.
	Err error
}

// EventType says what happened to an object.
type EventType uint8

// The three kinds of change.
const (
	Added EventType = iota + 1
	Modified
	Deleted
)

func (t EventType) String() string {
	switch t {
	case Added:
		return "Added"
	case Modified:
		return "Modified"
	case Deleted:
		return "Deleted"
	}
	return "Unknown"
}
