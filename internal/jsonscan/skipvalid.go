package jsonscan

// SkipValid reads a value that the caller knows to be well-formed JSON,
// as Raw would read it, and returns its bytes (b's own memory), white
// space before it excluded: the caller must know, not hope, that the text
// is valid, for SkipValid checks nothing but the structure it needs to
// find the value's end. A store's decoder knows it of a part of a value
// that is byte for byte a part of a value read and validated before (see
// store's baseValue): reading it again to find where it ends took Raw's
// whole validation, token by token.
//
// It finds the end by structure alone: a string runs to the quote that
// closes it (past escapes), a container to the close that matches it, a
// scalar to the next ',', ']', '}' or white space. For a valid value that
// is Raw's answer. For any other text it may answer anything (never
// beyond b), or report false when it finds no end; it never panics.
func (r *Reader) SkipValid() ([]byte, bool) {
	b := r.p.b
	i := spaceEnd(b, r.p.i)
	start := i
	if i >= len(b) {
		return nil, false
	}
	switch b[i] {
	case '{', '[':
	case '"':
		if i = stringEnd(b, i+1); i < 0 {
			return nil, false
		}
		r.p.i = i
		return b[start:i], true
	default:
		for i < len(b) && !endsScalar[b[i]] {
			i++
		}
		r.p.i = i
		return b[start:i], true
	}
	depth := 0
	for {
		for i < len(b) && structural[b[i]] == 0 {
			i++
		}
		if i >= len(b) {
			return nil, false
		}
		switch structural[b[i]] {
		case '"':
			if i = stringEnd(b, i+1); i < 0 {
				return nil, false
			}
			continue
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				r.p.i = i + 1
				return b[start : i+1], true
			}
		}
		i++
	}
}

// stringEnd returns the index just past the quote that closes the string
// whose content starts at i, -1 when there is none: plain runs a word at
// a time (plainEnd), an escape's backslash and the byte after it, and any
// other byte that ends a run (a byte of a multi-byte character, or a
// control character, which a valid text has not) one by one.
func stringEnd(b []byte, i int) int {
	for {
		if i = plainEnd(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
}

// structural holds, for each byte, what SkipValid makes of it within a
// container: '"' for a quote, '{' for an opening and '}' for a closing
// bracket or brace, and 0 for any other byte, which it passes over.
var structural = func() (t [256]byte) {
	t['"'], t['{'], t['['], t['}'], t[']'] = '"', '{', '{', '}', '}'
	return t
}()

// endsScalar holds, for each byte, whether it ends a scalar that is not a
// string (see SkipValid).
var endsScalar = func() (t [256]bool) {
	for _, c := range ",]} \t\n\r" {
		t[c] = true
	}
	return t
}()
