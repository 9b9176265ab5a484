package store

// StatusOption refines UpdateStatus (and ApplyStatus).
type StatusOption interface{ applyStatus(*statusConfig) }

// DeleteOption refines Delete.
type DeleteOption interface{ applyDelete(*deleteConfig) }

type statusConfig struct {
	generation    int64
	hasGeneration bool
}

type deleteConfig struct {
	revision int64
	uid      string
}

// IfGeneration makes a status write conditional on the spec it was computed
// from: the write is rejected with ErrConflict if the stored Generation has
// moved past g. Writes that did not change the spec (metadata, status, other
// managers' conditions) never make it fail.
func IfGeneration(g int64) StatusOption { return generationOption(g) }

type generationOption int64

func (g generationOption) applyStatus(c *statusConfig) {
	c.generation, c.hasGeneration = int64(g), true
}

// IfRevision makes a write conditional on the object's revision: it is
// rejected with ErrConflict unless the stored object is still at revision r,
// that is, nobody wrote it since the read that returned r. It applies to
// Delete (and Apply).
func IfRevision(r int64) RevisionOption { return RevisionOption(r) }

// RevisionOption is the option IfRevision returns.
type RevisionOption int64

func (r RevisionOption) applyDelete(c *deleteConfig) { c.revision = int64(r) }

// IfUID makes a Delete conditional on the object's identity: it is rejected
// with ErrConflict if the object called name is not the one with this UID
// (it was deleted and recreated since it was read).
func IfUID(uid string) DeleteOption { return uidOption(uid) }

type uidOption string

func (u uidOption) applyDelete(c *deleteConfig) { c.uid = string(u) }
