package pgstore

// HeldEvents is how many events the Backend's watches hold in memory, read
// from the database and not yet in a channel.
func (b *Backend) HeldEvents() int64 { return b.held.Load() }

// ReadQueries are the texts of the List query of a bounded range and of
// the watch's query.
func (b *Backend) ReadQueries() (list, watch string) { return b.sql.list, b.sql.watch }
