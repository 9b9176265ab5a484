package pathname_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/steady-go/steady/internal/pathname"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestIsIdent pins the names path notation writes bare: a letter or
// underscore first, then letters, digits, underscores and hyphens.
func TestIsIdent(t *testing.T) {
	for name, want := range map[string]bool{
		"spec": true, "_x": true, "a1": true, "app-name": true, "A_b-9": true,
		"": false, "1a": false, "-a": false, "a.b": false, "a b": false,
		"é": false, "a/b": false, "a=b": false, `a"`: false,
	} {
		if got := pathname.IsIdent(name); got != want {
			t.Errorf("IsIdent(%q) = %v, want %v", name, got, want)
		}
	}
}
