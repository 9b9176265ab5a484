package store

// Event is one change to a typed object, delivered by Store.Watch.
type Event[S, T any] struct {
	// Type is Added, Modified or Deleted (zero for a Progress, error or
	// Undecodable event).
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
	// Undecodable is set on the event of a write whose value is not an
	// object of the kind (see DecodeError); Type is then zero, Object nil,
	// and Prev the object before the write if that decoded. The watch goes
	// on. The next write of a valid value is Added (Prev nil), and the
	// deletion of an undecodable value is Deleted with an Object holding
	// only Meta.Kind, Name and Revision, and Prev nil.
	Undecodable *DecodeError
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
