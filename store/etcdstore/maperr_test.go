package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/steady-go/steady/store"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestMapErrAmbiguousCommits: every etcd error after which a request may or
// may not have been carried out is ErrUnavailable, in each form the client
// hands it back (the rpctypes.EtcdError it converts server errors to, which
// carries no gRPC status, the raw gRPC status, and wrapped). Before, the
// EtcdError forms came back as plain errors, since status.Code does not see
// their code.
func TestMapErrAmbiguousCommits(t *testing.T) {
	grpcErrs := map[string]error{
		"request timed out":                     rpctypes.ErrGRPCTimeout,
		"timed out after leader failure":        rpctypes.ErrGRPCTimeoutDueToLeaderFail,
		"timed out after connection lost":       rpctypes.ErrGRPCTimeoutDueToConnectionLost,
		"timed out waiting for applied index":   rpctypes.ErrGRPCTimeoutWaitAppliedIndex,
		"no leader":                             rpctypes.ErrGRPCNoLeader,
		"leader changed":                        rpctypes.ErrGRPCLeaderChanged,
		"unhealthy cluster":                     rpctypes.ErrGRPCUnhealthy,
		"server stopped":                        rpctypes.ErrGRPCStopped,
		"too many requests":                     rpctypes.ErrGRPCRequestTooManyRequests,
		"grpc Unavailable (connection refused)": status.Error(codes.Unavailable, "connection refused"),
		"grpc DeadlineExceeded":                 status.Error(codes.DeadlineExceeded, "deadline"),
	}
	ctx := context.Background()
	for name, g := range grpcErrs {
		t.Run(name, func(t *testing.T) {
			for form, err := range map[string]error{
				"client":  rpctypes.Error(g), // what clientv3 returns
				"grpc":    g,
				"wrapped": fmt.Errorf("txn: %w", rpctypes.Error(g)),
			} {
				got := mapErr(ctx, err)
				require.ErrorIs(t, got, store.ErrUnavailable, "%s form: %v", form, got)
				require.ErrorContains(t, got, "may have committed; retry idempotently")
			}
		})
	}
	t.Run("context deadline of the request", func(t *testing.T) {
		require.ErrorIs(t, mapErr(ctx, fmt.Errorf("etcd: %w", context.DeadlineExceeded)), store.ErrUnavailable)
	})
	t.Run("the caller's own ctx ended", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		got := mapErr(cctx, rpctypes.Error(rpctypes.ErrGRPCTimeout))
		require.ErrorIs(t, got, context.Canceled, "the caller's cancellation is its own error")
	})
	t.Run("a closed client", func(t *testing.T) {
		got := mapErr(ctx, status.Error(codes.Canceled, "grpc: the client connection is closing"))
		require.ErrorIs(t, got, store.ErrClosed)
		require.False(t, errors.Is(got, store.ErrUnavailable))
		require.False(t, errors.Is(mapErr(ctx, status.Error(codes.Canceled, "context canceled")), store.ErrClosed), "another Canceled")
	})
	t.Run("not ambiguous", func(t *testing.T) {
		got := mapErr(ctx, rpctypes.ErrCompacted)
		require.ErrorIs(t, got, store.ErrExpired)
		require.False(t, errors.Is(got, store.ErrUnavailable))
		require.False(t, errors.Is(mapErr(ctx, rpctypes.ErrKeyNotFound), store.ErrUnavailable))
	})
}
