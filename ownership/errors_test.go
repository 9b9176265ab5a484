package ownership

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBadInputIsAnErrorNotAPanic(t *testing.T) {
	live := obj(t, `{"spec":{"items":[{"name":"x"}]}}`)
	cases := []struct {
		name    string
		config  map[string]any
		manager string
		want    string
	}{
		{"empty manager", obj(t, `{"a":1}`), "", "needs a manager"},
		{"unsupported type", map[string]any{"a": make(chan int)}, "m", "unsupported value of type chan int"},
		{"unsupported type in an atomic list", map[string]any{"a": []any{struct{}{}}}, "m", "unsupported value"},
		{"keyed item without its key", obj(t, `{"spec":{"items":[{"v":1}]}}`), "m", `.spec.items: list item key field name is missing`},
		{"keyed item that is not an object", obj(t, `{"spec":{"items":["x"]}}`), "m", "not an object"},
		{"duplicate keyed items", obj(t, `{"spec":{"items":[{"name":"x"},{"name":"x","v":1}]}}`), "m", `duplicate list item [name="x"]`},
		{"set item that is not a scalar", obj(t, `{"spec":{"tags":[{"a":1}]}}`), "m", "not a scalar"},
		{"duplicate set items", obj(t, `{"spec":{"tags":["a",1,"a"]}}`), "m", `duplicate set item "a"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Apply(live, c.config, c.manager, nil, WithSchema(portsSchema))
			require.ErrorContains(t, err, c.want)
			var ce *ConflictError
			require.False(t, errors.As(err, &ce), "bad input is not a conflict")
		})
	}

	_, err := Update(nil, obj(t, `{"a":1}`), "", nil)
	require.ErrorContains(t, err, "needs a manager")
	_, err = Update(live, obj(t, `{"spec":{"items":[{"name":"x"},{"name":"x"}]}}`), "u", nil, WithSchema(portsSchema))
	require.ErrorContains(t, err, "duplicate")
	_, err = Update(live, map[string]any{"a": make(chan int)}, "u", nil)
	require.ErrorContains(t, err, "unsupported value")
	_, err = Apply(live, []int{1}, "m", nil)
	require.ErrorContains(t, err, "not an object")
}

func TestApplyDoesNotShareConfigValues(t *testing.T) {
	cfg := obj(t, `{"args":["a"],"m":{"k":"v"}}`)
	r := applyOK(t, nil, cfg, "m", nil)
	cfg["args"].([]any)[0] = "changed"
	cfg["m"].(map[string]any)["k"] = "changed"
	requireObject(t, `{"args":["a"],"m":{"k":"v"}}`, r.Object)
}
