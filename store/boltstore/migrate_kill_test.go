package boltstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"
)

// The kind TestMigrateKill9 migrates: v2 renamed v1's image.
type (
	migSpecV1 struct {
		Image string `json:"image"`
	}
	migSpecV2 struct {
		ContainerImage string `json:"containerImage"`
	}
	migStatus struct {
		Ready bool `json:"ready"`
	}
)

func migVersions(t testing.TB, storage string) *store.Versions {
	t.Helper()
	vs, err := store.NewVersions(storage,
		store.VersionOf("v1", store.Conversion[migSpecV1, migStatus, migSpecV2, migStatus]{
			ToHub: func(s migSpecV1, st migStatus) (migSpecV2, migStatus, error) {
				return migSpecV2{ContainerImage: s.Image}, st, nil
			},
			FromHub: func(s migSpecV2, st migStatus) (migSpecV1, migStatus, error) {
				return migSpecV1{Image: s.ContainerImage}, st, nil
			},
		}),
		store.VersionOf("v2", store.Conversion[migSpecV2, migStatus, migSpecV2, migStatus]{}))
	require.NoError(t, err)
	return vs
}

const envMigrateFile = "BOLTSTORE_MIGRATE_FILE"

// TestMigrateKill9 kills (SIGKILL) a process in the middle of a storage
// migration, then reruns the migration in this one: the rerun resumes from
// the checkpoint and finishes, and every object is at the new storage
// version with its data.
func TestMigrateKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	const n = 300
	path := filepath.Join(t.TempDir(), "steady.db")
	b, err := boltstore.Open(path)
	require.NoError(t, err)
	s1, err := store.New[migSpecV1, migStatus](b, "Widget", store.WithVersion("v1", migVersions(t, "v1")))
	require.NoError(t, err)
	for i := range n {
		_, err := s1.As("old").Create(t.Context(), &store.Object[migSpecV1, migStatus]{
			Meta: store.Meta{Name: fmt.Sprintf("w%03d", i)}, Spec: migSpecV1{Image: fmt.Sprintf("img:%d", i)}})
		require.NoError(t, err)
	}
	require.NoError(t, b.Close())

	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateKill9Child$", "-test.count=1")
	cmd.Env = append(os.Environ(), envMigrateFile+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(out)
	pages := 0
	for pages < 3 {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "the child ended before its third page")
		if strings.HasPrefix(line, "progress ") {
			pages++
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL, mid-migration
	_ = cmd.Wait()

	b, err = boltstore.Open(path)
	require.NoError(t, err, "the file opens after kill -9")
	defer b.Close()
	cp, err := b.Get(t.Context(), "_migrations/Widget")
	require.NoError(t, err, "the killed run left its checkpoint")
	t.Logf("checkpoint after the kill: %s", cp.Value)

	s2, err := store.New[migSpecV2, migStatus](b, "Widget", store.WithVersion("v2", migVersions(t, "v2")))
	require.NoError(t, err)
	p, err := s2.Migrate(t.Context(), store.MigrateOptions{PageSize: 20})
	require.NoError(t, err)
	t.Logf("rerun: %+v", p)
	require.True(t, p.Done)
	require.NotEmpty(t, p.Resumed, "the rerun resumed from the checkpoint")
	require.Less(t, p.Scanned, n, "and did not start over")
	require.Positive(t, p.Migrated)

	l, err := b.List(t.Context(), "Widget/", kv.ListOptions{})
	require.NoError(t, err)
	require.Len(t, l.KVs, n)
	for _, kvp := range l.KVs {
		var env struct{ Version string }
		require.NoError(t, json.Unmarshal(kvp.Value, &env))
		require.Equal(t, "v2", env.Version, "%s is at the storage version", kvp.Key)
	}
	for i := range n {
		got, err := s2.Get(t.Context(), fmt.Sprintf("w%03d", i))
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("img:%d", i), got.Spec.ContainerImage)
	}
	_, err = b.Get(t.Context(), "_migrations/Widget")
	require.ErrorIs(t, err, store.ErrNotFound, "the finished rerun removed the checkpoint")
}

// TestMigrateKill9Child is TestMigrateKill9's child: it migrates until it is
// killed, reporting each page on stdout.
func TestMigrateKill9Child(t *testing.T) {
	path := os.Getenv(envMigrateFile)
	if path == "" {
		t.Skip("run by TestMigrateKill9")
	}
	b, err := boltstore.Open(path)
	require.NoError(t, err)
	defer b.Close()
	s2, err := store.New[migSpecV2, migStatus](b, "Widget", store.WithVersion("v2", migVersions(t, "v2")))
	require.NoError(t, err)
	_, err = s2.Migrate(context.Background(), store.MigrateOptions{PageSize: 20, Progress: func(p store.MigrateProgress) {
		fmt.Printf("progress %+v\n", p)
	}})
	require.NoError(t, err)
	t.Fatal("the migration finished before the parent killed it")
}
