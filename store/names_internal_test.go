package store

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// validateNameBySplit is ValidateName as it was, splitting the name into
// its segments: the oracle of TestValidateNameAgreesWithSplitting.
func validateNameBySplit(s string) error {
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
	for seg := range strings.SplitSeq(s, ".") {
		switch {
		case seg == "":
			return bad(ruleNameSegment)
		case len(seg) > maxNameSegmentLength:
			return bad(ruleNameSegLength)
		case seg[0] == '-' || seg[len(seg)-1] == '-':
			return bad(ruleNameEdges)
		}
	}
	return nil
}

// ValidateName gives the error splitting the name into segments gives,
// rule for rule, on random names of dots, dashes and letters, long
// segments included.
func TestValidateNameAgreesWithSplitting(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 3))
	alphabet := []string{"a", "z", "0", "-", ".", "A", "_", strings.Repeat("b", 30)}
	for range 20000 {
		var sb strings.Builder
		for range rng.IntN(12) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		name := sb.String()
		require.Equal(t, validateNameBySplit(name), ValidateName(name), "%q", name)
	}
}
