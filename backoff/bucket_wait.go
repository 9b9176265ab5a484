package backoff

import (
	"context"
	"time"
)

// Wait takes a token as When does and waits for it on the bucket's clock:
// at once while the bucket holds tokens, at most the ceiling past that. It
// returns ctx's error if ctx ends first (the token stays taken). Its shape
// is manager.WithWriteLimit's: b.Wait paces writes.
func (b *Bucket[K]) Wait(ctx context.Context) error {
	var zero K
	return b.sleep(ctx, b.When(zero))
}

// sleep waits d on the bucket's clock, or until ctx ends.
func (b *Bucket[K]) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := b.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
