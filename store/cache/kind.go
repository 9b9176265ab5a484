package cache

import "github.com/steady-go/steady/internal/storeaccess"

// Kind returns the kind of the objects when the Cache reads a Store (its
// ListWatcher has a Kind method, as *store.Store does), else "".
func (c *Cache[S, T]) Kind() string {
	if k, ok := c.src.(interface{ Kind() string }); ok {
		return k.Kind()
	}
	return ""
}

// Version returns the version of the kind the objects are served at (see
// store.WithVersion) when the Cache reads a Store, else "": "" too for a
// kind without versions.
func (c *Cache[S, T]) Version() string {
	if v, ok := storeaccess.Of(c.src).(interface{ Version() string }); ok {
		return v.Version()
	}
	return ""
}
