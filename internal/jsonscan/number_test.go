package jsonscan

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// IsNumber accepts exactly the texts encoding/json accepts as one number,
// and ParseNumber reads them as Decode's trees hold them.
func TestIsNumberAndParseNumberAgreeWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "1", "-1", "10", "0.5", "-0.5", "1e3", "1E3", "1e+3", "1e-3", "1.5e10",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e400",
		"", "-", "01", "-01", "1.", ".5", "1e", "1e+", "+1", "1 ", " 1", "0x1", "1.5.2", "NaN", "Inf", "--1", "1-",
	} {
		var n json.Number
		valid := json.Unmarshal([]byte(s), &n) == nil && string(n) == s
		require.Equal(t, valid, IsNumber(s), "IsNumber(%q)", s)
		if !valid {
			continue
		}
		i, f, isInt, ok := ParseNumber(s)
		want, err := strconv.ParseFloat(s, 64)
		require.Equal(t, err == nil, ok, "ParseNumber(%q) ok", s)
		if wi, ierr := strconv.ParseInt(s, 10, 64); ierr == nil {
			require.True(t, isInt, "ParseNumber(%q) is an integer", s)
			require.Equal(t, wi, i)
		} else if ok {
			require.False(t, isInt, "ParseNumber(%q) is a float", s)
			require.Equal(t, want, f)
		}
	}
}

// Number keeps the text of every integer an int64 would not write back as it
// was (encoding the tree gives it again), and reads the rest as
// encoding/json does.
func TestNumberKeepsIntegerText(t *testing.T) {
	for _, c := range []struct {
		text string
		want any
	}{
		{"0", int64(0)},
		{"-7", int64(-7)},
		{"9223372036854775807", int64(math.MaxInt64)},
		{"-9223372036854775808", int64(math.MinInt64)},
		{"-0", json.Number("-0")},
		{"9223372036854775808", json.Number("9223372036854775808")},
		{"18446744073709551615", json.Number("18446744073709551615")},
		{"-9223372036854775809", json.Number("-9223372036854775809")},
		{"123456789012345678901234567890", json.Number("123456789012345678901234567890")},
		{"1e3", json.Number("1e3")},
		{"1.0", json.Number("1.0")},
		{"-0.0", json.Number("-0.0")},
		{"1e21", json.Number("1e21")},
		{"1e-400", json.Number("1e-400")},
		{"0.5", 0.5},
		{"-2.5e-3", -2.5e-3},
		{"1.0000000000000000001", json.Number("1.0000000000000000001")},
	} {
		got, ok := Number(c.text)
		require.True(t, ok, c.text)
		require.Equal(t, c.want, got, c.text)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		if _, isFloat := got.(float64); !isFloat {
			require.Equal(t, c.text, string(b), "%s encodes back as it was", c.text)
		}
	}
	for _, bad := range []string{"1e400", "-1e400"} {
		_, ok := Number(bad)
		require.False(t, ok, bad)
	}
}

// Reader.Int64 reads exactly the texts encoding/json decodes into an int64,
// to the same value, and reads the whole number (it never stops inside
// one): its short integers' one pass and the general way alike.
func TestInt64AgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "7", "-7", "10", "120", "-120", "123456789012345678", "-123456789012345678",
		"1234567890123456789", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "9999999999999999999", "99999999999999999999",
		"01", "-01", "00", "0123456789", "-", "", "1.", "1.0", "1.5", "-0.0", "1e2", "1E2", "1e+2", "1e-2",
		"0e0", "1e", "+1", " 12", "12 ", "0x1", "1-", "--1", "123456789012345678.5", "123456789012345678e1",
	} {
		var want int64
		valid := json.Unmarshal([]byte(s), &want) == nil
		r := NewReader([]byte(s))
		n, ok := r.Int64()
		if rest := s[r.Pos():]; ok && rest != "" {
			require.NotContains(t, ".eE0123456789", rest[:1], "Int64 of %q stopped inside the number", s)
		}
		ok = ok && r.End()
		require.Equal(t, valid, ok, "Int64 of %q", s)
		if valid {
			require.Equal(t, want, n, "Int64 of %q", s)
		}
	}
}
