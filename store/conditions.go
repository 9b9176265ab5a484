package store

import "fmt"

// validateConditions checks that a condition list is keyed by type: every
// Type non-empty and unique, every Status one of True, False and Unknown.
func validateConditions(conds []Condition) error {
	for i, c := range conds {
		if c.Type == "" {
			return fmt.Errorf("%w: condition %d has no type", ErrInvalid, i)
		}
		switch c.Status {
		case ConditionTrue, ConditionFalse, ConditionUnknown:
		default:
			return fmt.Errorf("%w: condition %q has status %q, want True, False or Unknown", ErrInvalid, c.Type, c.Status)
		}
		for _, d := range conds[:i] {
			if d.Type == c.Type {
				return fmt.Errorf("%w: condition type %q appears twice", ErrInvalid, c.Type)
			}
		}
	}
	return nil
}

// conditionsEqual compares condition lists, times by instant.
func conditionsEqual(a, b []Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Type != y.Type || x.Status != y.Status || x.Reason != y.Reason || x.Message != y.Message ||
			x.ObservedGeneration != y.ObservedGeneration || !x.LastTransitionTime.Equal(y.LastTransitionTime) {
			return false
		}
	}
	return true
}
