package diff

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/steady-go/steady/internal/pathname"
)

// appendTo writes e in path notation.
func (e Element) appendTo(b *strings.Builder) {
	switch e.Kind {
	case FieldElem:
		if pathname.IsIdent(e.Name) {
			b.WriteByte('.')
			b.WriteString(e.Name)
			return
		}
		b.WriteByte('[')
		b.WriteString(strconv.Quote(e.Name))
		b.WriteByte(']')
	case KeyElem:
		b.WriteByte('[')
		for i, k := range e.Keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if pathname.IsIdent(k.Name) {
				b.WriteString(k.Name)
			} else {
				b.WriteString(strconv.Quote(k.Name))
			}
			b.WriteByte('=')
			b.WriteString(formatScalar(k.Value))
		}
		b.WriteByte(']')
	case ValueElem:
		b.WriteString("[=")
		b.WriteString(formatScalar(e.Value))
		b.WriteByte(']')
	case IndexElem:
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(e.Index))
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "[<invalid element kind %d>]", e.Kind)
	}
}

// formatScalar writes a normalized key or set value: a quoted string, an
// integer, a float in shortest form, true, false, null, NaN, +Inf or -Inf.
// Values of other types are formatted with %v and quoted, as a last resort.
func formatScalar(v any) string {
	switch x := normalizeScalar(v).(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return formatFloat(x)
	case string:
		return strconv.Quote(x)
	default:
		return strconv.Quote(fmt.Sprint(x))
	}
}

func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// normalizeScalar maps Go scalars to the path value forms: signed and
// unsigned integers to int64 (uint64 beyond it), floats to int64 or uint64
// when integral and in range, named string and bool types to string and bool.
// A json.Number becomes its number (its string when malformed). Other values
// are returned unchanged.
func normalizeScalar(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return v
	case float64:
		return normalizeFloat(x)
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return normalizeFloat(float64(x))
	case json.Number:
		if n, err := parseNumber(string(x)); err == nil {
			return n
		}
		return string(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return u
		}
		return int64(u)
	case reflect.Float32, reflect.Float64:
		return normalizeFloat(rv.Float())
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	}
	return v
}

// normalizeFloat returns f as int64, or uint64 beyond it, when it is
// integral and fits, else f.
func normalizeFloat(f float64) any {
	switch {
	case f != math.Trunc(f):
	case f >= -(1<<63) && f < 1<<63:
		return int64(f)
	case f >= 0 && f < 1<<64:
		return uint64(f)
	}
	return f
}
