package pgstore

// HeldEvents is how many events the Backend's watches hold in memory, read
// from the database and not yet in a channel.
func (b *Backend) HeldEvents() int64 { return b.held.Load() }
