package store

import (
	"fmt"
	"strings"
)

// Limits of the naming rules.
const (
	maxKindLength        = 63
	maxNameLength        = 253
	maxNameSegmentLength = 63 // between dots
)

// invalidNameError reports a kind or name that breaks a naming rule. It
// matches ErrInvalid with errors.Is, and its text names the rule.
type invalidNameError struct {
	// What is "kind" or "name".
	What string
	// Value is the rejected string.
	Value string
	// Rule is the rule it broke, in words, as listed on New (for kinds) and
	// ValidateName.
	Rule string
}

// Error quotes at most the first 128 bytes of Value, so a huge bad name
// does not make a huge message.
func (e *invalidNameError) Error() string {
	return fmt.Sprintf("store: invalid %s %q: %s", e.What, truncate(e.Value), e.Rule)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *invalidNameError) Is(target error) bool { return target == ErrInvalid }

// The rules, as invalidNameError.Rule spells them.
const (
	ruleEmpty         = "must not be empty"
	ruleKindLength    = "must be at most 63 characters"
	ruleKindStart     = "must start with an ASCII letter"
	ruleKindChars     = "may contain only ASCII letters, digits, '.', '-' and '_'"
	ruleNameLength    = "must be at most 253 characters"
	ruleNameChars     = "may contain only lowercase ASCII letters, digits, '-' and '.'"
	ruleNameSegment   = "must not have an empty segment between dots"
	ruleNameSegLength = "must have segments of at most 63 characters between dots"
	ruleNameEdges     = "must start and end every dot-separated segment with a lowercase letter or digit"
)

// validateKind reports whether s is a valid kind, by the rules listed on
// New.
func validateKind(s string) error {
	bad := func(rule string) error { return &invalidNameError{What: "kind", Value: s, Rule: rule} }
	switch {
	case s == "":
		return bad(ruleEmpty)
	case len(s) > maxKindLength:
		return bad(ruleKindLength)
	case !isLetter(s[0]):
		return bad(ruleKindStart)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '.' && c != '-' && c != '_' {
			return bad(ruleKindChars)
		}
	}
	return nil
}

// ValidateName reports whether s is a valid object name. The rules are those
// of a DNS-1123 subdomain, as in Kubernetes. A name:
//
//   - must not be empty;
//   - must be at most 253 characters;
//   - may contain only lowercase ASCII letters, digits, '-' and '.';
//   - must not have an empty segment between dots (no leading, trailing or
//     doubled dot);
//   - must have segments of at most 63 characters between dots;
//   - must start and end every dot-separated segment with a lowercase letter
//     or digit.
//
// So "web", "web-1" and "web.example.com" are names, while "Web", "web_1",
// "-web", "web..a" and "a/b" are not. The rules are checked in the order
// listed and the first one broken is reported, as an error that names it and
// matches ErrInvalid.
func ValidateName(s string) error {
	if validName(s) {
		return nil
	}
	return nameError(s)
}

// validName reports whether s breaks none of ValidateName's rules, in one
// pass over its bytes, each classified by a table (every Get and write
// validates a name, and every decode the name of its key: the rules one
// after the other were ~170 instructions for a 9-byte name). It does not
// say which rule a bad name breaks: nameError does.
func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLength {
		return false
	}
	seg := 0 // where the segment being read starts
	for i := 0; i < len(s); i++ {
		switch nameByte[s[i]] {
		case nameAlnum:
			// Most bytes: nothing to check against the one before.
		case nameDash:
			if i == seg { // a segment's first byte
				return false
			}
		case nameDot:
			if i == seg || s[i-1] == '-' || i-seg > maxNameSegmentLength {
				return false
			}
			seg = i + 1
		default:
			return false
		}
	}
	last := s[len(s)-1]
	return last != '.' && last != '-' && len(s)-seg <= maxNameSegmentLength
}

// The classes of bytes in names (nameByte); 0 is a byte no name holds.
const (
	nameAlnum = 1 + iota
	nameDash
	nameDot
)

// nameByte is the class of each byte in a name.
var nameByte = func() (t [256]uint8) {
	for c := range t {
		switch c := byte(c); {
		case isLower(c) || isDigit(c):
			t[c] = nameAlnum
		case c == '-':
			t[c] = nameDash
		case c == '.':
			t[c] = nameDot
		}
	}
	return t
}()

// nameError is the error ValidateName gives for s, a name validName
// refused: the first rule it breaks, the rules checked in their order.
func nameError(s string) error {
	bad := func(rule string) error { return &invalidNameError{What: "name", Value: s, Rule: rule} }
	switch {
	case s == "":
		return bad(ruleEmpty)
	case len(s) > maxNameLength:
		return bad(ruleNameLength)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLower(c) && !isDigit(c) && c != '-' && c != '.' {
			return bad(ruleNameChars)
		}
	}
	// The segments between dots, in order (every Get and write validates
	// a name: no iterator).
	for start := 0; start <= len(s); {
		end := start + strings.IndexByte(s[start:], '.')
		if end < start {
			end = len(s)
		}
		switch seg := s[start:end]; {
		case seg == "":
			return bad(ruleNameSegment)
		case len(seg) > maxNameSegmentLength:
			return bad(ruleNameSegLength)
		case seg[0] == '-' || seg[len(seg)-1] == '-':
			return bad(ruleNameEdges)
		}
		start = end + 1
	}
	return nil
}

func isLower(c byte) bool  { return 'a' <= c && c <= 'z' }
func isLetter(c byte) bool { return isLower(c) || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
