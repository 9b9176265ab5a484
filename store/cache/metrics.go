package cache

// Metrics receives a Cache's measurements. Adapt it to any metrics library;
// embed NopMetrics to implement only some methods.
//
// The Cache calls the methods on Run's goroutine, without its locks held;
// they must be quick and safe for concurrent use.
type Metrics interface {
	// Quarantined reports how many keys hold a value that is not an object
	// of the kind (see Cache.Quarantined), whenever the number changes.
	Quarantined(n int)
}

// NopMetrics implements Metrics by doing nothing. Embed it in a type that
// implements only the methods it needs.
type NopMetrics struct{}

// Quarantined does nothing.
func (NopMetrics) Quarantined(int) {}
