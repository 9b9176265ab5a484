package backoff

import "time"

// Retry is NewDefault's rule for a caller that counts each key's
// consecutive failures itself, as the reconcile Loop does in its per-key
// state: attempt n (from 0) of key waits the longer of the Policy's
// Delay(n) and the When of one Bucket that paces all keys together. The
// caller resets a key by counting from 0 again; the Bucket tracks no keys,
// so there is nothing to Forget. A Retry is safe for concurrent use if its
// Policy's Rand is; the zero value is not usable, create one with NewRetry.
type Retry[K comparable] struct {
	policy Policy
	bucket *Bucket[K]
}

// NewRetry returns a Retry that follows p and paces all keys with a Bucket
// configured by cfg (zero fields take their defaults, so DefaultPolicy()
// and BucketConfig{} give NewDefault's delays). It returns an error
// wrapping ErrInvalidConfig if p.Validate or NewBucket reports one.
func NewRetry[K comparable](p Policy, cfg BucketConfig) (*Retry[K], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	b, err := NewBucket[K](cfg)
	if err != nil {
		return nil, err
	}
	return &Retry[K]{policy: p, bucket: b}, nil
}

// Delay records one failure of key with the Bucket and returns how long
// attempt n of key waits: max(Policy.Delay(n), the Bucket's When).
func (r *Retry[K]) Delay(key K, n int) time.Duration {
	return max(r.policy.Delay(n), r.bucket.When(key))
}
