package jsonscan

import (
	"encoding/json"
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
