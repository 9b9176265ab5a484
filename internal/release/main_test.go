package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// repo writes a repository of a root module and one nested module that
// requires the root at rootVersion.
func repo(t *testing.T, rootVersion string) string {
	t.Helper()
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/steady-go/steady\n\ngo 1.26.0\n")
	write("steady.go", "package steady\n")
	write("store/boltstore/go.mod", "module github.com/steady-go/steady/store/boltstore\n\ngo 1.26.0\n\nrequire github.com/steady-go/steady "+
		rootVersion+"\n\nreplace github.com/steady-go/steady => ../..\n")
	write("store/boltstore/bolt.go", "package boltstore\n")
	return root
}

// A nested module that requires the root at another version than the one
// packed would not resolve for a dependent: nothing is packed, and the
// error says what to run.
func TestRefusesARequireOfAnotherVersion(t *testing.T) {
	out := t.TempDir()
	err := run(repo(t, "v0.0.0"), "v0.1.0", out, []string{".", "store/boltstore"})
	want := "store/boltstore/go.mod requires github.com/steady-go/steady v0.0.0, not v0.1.0: run scripts/release.sh v0.1.0 first"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one containing %q", err, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("packed %d entries despite the error", len(entries))
	}
	for _, v := range []string{"", "0.1.0", "v0.1", "v2.0.0", "v0.1.0+build"} {
		if err := run(repo(t, "v0.1.0"), v, out, []string{"."}); err == nil {
			t.Errorf("-version %q: no error", v)
		}
	}
}

// The proxy serves each module at the version: its zip (the root's without
// the nested module's files), go.mod, info and list, as the go command
// reads them from a GOPROXY=file:// directory.
func TestPacksEachModule(t *testing.T) {
	out := t.TempDir()
	if err := run(repo(t, "v0.1.0"), "v0.1.0", out, []string{".", "store/boltstore"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"list", "v0.1.0.info", "v0.1.0.mod", "v0.1.0.zip"} {
		for _, mod := range []string{"github.com/steady-go/steady", "github.com/steady-go/steady/store/boltstore"} {
			if _, err := os.Stat(filepath.Join(out, mod, "@v", name)); err != nil {
				t.Error(err)
			}
		}
	}
	files, err := zip.CheckZip(module.Version{Path: "github.com/steady-go/steady", Version: "v0.1.0"},
		filepath.Join(out, "github.com/steady-go/steady/@v/v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	got := files.Valid
	if len(got) != 2 || got[0] != "github.com/steady-go/steady@v0.1.0/go.mod" || got[1] != "github.com/steady-go/steady@v0.1.0/steady.go" {
		t.Fatalf("root zip holds %q, want only go.mod and steady.go", got)
	}
}
