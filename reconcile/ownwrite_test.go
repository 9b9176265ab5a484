package reconcile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
)

func TestIsOwnWrite(t *testing.T) {
	owned := map[string]bool{".status.phase": true, `.conditions[type="Ready"]`: true}
	ownedBySelf := func(p string) bool { return owned[p] }
	tests := []struct {
		name    string
		typ     store.EventType
		writer  string
		changed []string
		own     bool
	}{
		{"own status write", store.Modified, "app", []string{".status.phase"}, true},
		{"own write of several owned paths", store.Modified, "app", []string{".status.phase", `.conditions[type="Ready"]`}, true},
		{"own write that changed nothing", store.Modified, "app", nil, true},
		{"another manager's write", store.Modified, "other", []string{".status.phase"}, false},
		{"own write merged with another actor's change", store.Modified, "app", []string{".status.phase", ".spec.replicas"}, false},
		{"own write to a path self does not own", store.Modified, "app", []string{".spec.replicas"}, false},
		{"creation is always a hint", store.Added, "app", []string{".status.phase"}, false},
		{"deletion is always a hint", store.Deleted, "app", []string{".status.phase"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.own, isOwnWrite("app", tt.typ, tt.writer, tt.changed, ownedBySelf))
		})
	}
}
