// Package pathname holds the one rule for which field and key names diff's
// path notation writes bare (".spec", "[name=x]") and which it quotes
// (`["a.b"]`). diff formats and parses paths with it and ownership encodes
// field sets with it, so the two notations cannot drift apart.
package pathname

// IsIdent reports whether a field or key name can be written unquoted: an
// ASCII letter or underscore, then ASCII letters, digits, underscores or
// hyphens. The empty name is not an identifier.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
