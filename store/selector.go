package store

// Selector chooses objects by their labels.
type Selector interface {
	// Matches reports whether an object with these labels is selected.
	Matches(labels map[string]string) bool
	// String formats the selector in the syntax ParseSelector reads.
	String() string
}

// Everything returns the selector that matches every object.
func Everything() Selector { return everything{} }

type everything struct{}

func (everything) Matches(map[string]string) bool { return true }
func (everything) String() string                 { return "" }
