package etcdstore

// SetBeforeRelease makes every term of e run f after it ended, before its
// lease is revoked: a test holds a term's release with it.
func SetBeforeRelease(e *Elector, f func()) { e.beforeRelease = f }
