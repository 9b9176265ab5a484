package cache

import "context"

// RelistNow runs one periodic relist at once, as the relist timer does
// after the watch has caught up: for BenchmarkRelist.
func (c *Cache[S, T]) RelistNow(ctx context.Context) error {
	l, err := c.listAll(ctx)
	if err != nil {
		return err
	}
	c.repair(l)
	return nil
}

// SetWithoutPrev overrides whether c asks its source's watches to leave
// Event.Prev out, so that a test can route a Store's lean watch through a
// wrapper.
func (c *Cache[S, T]) SetWithoutPrev(on bool) { c.withoutPrev = on }
