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
	// Relisted counts a listing after the first: after a watch ended, or
	// a periodic relist (WithRelistPeriod).
	Relisted()
	// DriftRepaired counts the differences a periodic relist found between
	// the listing and what the watch had delivered: events the watch lost,
	// each reported to the handlers as a synthetic change.
	DriftRepaired(n int)
}

// NopMetrics implements Metrics by doing nothing. Embed it in a type that
// implements only the methods it needs.
type NopMetrics struct{}

// Quarantined does nothing.
func (NopMetrics) Quarantined(int) {}

// Relisted does nothing.
func (NopMetrics) Relisted() {}

// DriftRepaired does nothing.
func (NopMetrics) DriftRepaired(int) {}
