package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/ownership"
	"github.com/steady-go/steady/store"
)

// TestOpIsOwnershipsOperation: the store's Apply and Update stamps are field
// ownership's operations, values of one type, so LastWrite.Op compares with
// a managed entry's Operation without a conversion.
func TestOpIsOwnershipsOperation(t *testing.T) {
	require.Equal(t, ownership.OpApply, ownership.OpApply)
	require.Equal(t, ownership.OpUpdate, ownership.OpUpdate)
	lw := store.LastWrite{Op: ownership.OpApply}
	require.Equal(t, ownership.Entry{Operation: ownership.OpApply}.Operation, lw.Op)
}
