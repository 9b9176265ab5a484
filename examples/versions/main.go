// Command versions evolves a kind on disk. The kind, Widget, had one
// version, v1, with a spec {image}. Version v2 renamed image to
// containerImage, added replicas to the spec and a message to the status.
// The program runs at either version over one store/boltstore file:
//
//	versions -data DIR -as v1    # the old program: creates widgets at v1
//	versions -data DIR -as v2    # the new one: reads them, writes one, migrates
//	versions -data DIR -as v1    # the old program again: still reads and writes
//
// Without -as it runs the three in turn, each opening and closing the file
// as a separate program would. Both programs know both versions (the
// Versions table below is the one of the release that introduced v2); they
// differ in the version they serve and store. The v2 program stores v2 and
// runs store.Migrate, which rewrites every v1 value at v2, paced, printing
// a progress line per page. The v1 program reads v2 values converted, and
// its writes keep the fields v1 does not have.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"

	"github.com/steady-go/steady/store"
	"github.com/steady-go/steady/store/boltstore"
	"github.com/steady-go/steady/store/kv"

	"github.com/steady-go/steady/examples/internal/cli"
)

// The two versions of Widget. v2 is the hub: v1 converts to and from it.
type (
	SpecV1 struct {
		Image string `json:"image"`
	}
	StatusV1 struct {
		Ready bool `json:"ready"`
	}
	SpecV2 struct {
		ContainerImage string `json:"containerImage"`
		Replicas       int    `json:"replicas,omitempty"`
	}
	StatusV2 struct {
		Ready   bool   `json:"ready"`
		Message string `json:"message,omitempty"`
	}
)

// widgetVersions is Widget's versions table, storing storage.
func widgetVersions(storage string) (*store.Versions, error) {
	return store.NewVersions(storage,
		store.VersionOf("v1", store.Conversion[SpecV1, StatusV1, SpecV2, StatusV2]{
			ToHub: func(s SpecV1, st StatusV1) (SpecV2, StatusV2, error) {
				return SpecV2{ContainerImage: s.Image}, StatusV2{Ready: st.Ready}, nil
			},
			FromHub: func(s SpecV2, st StatusV2) (SpecV1, StatusV1, error) {
				return SpecV1{Image: s.ContainerImage}, StatusV1{Ready: st.Ready}, nil
			},
			Renames: []store.Rename{{From: ".spec.image", To: ".spec.containerImage"}},
		}),
		store.VersionOf("v2", store.Conversion[SpecV2, StatusV2, SpecV2, StatusV2]{}))
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cli.Exit("versions", run(ctx, os.Args[1:], os.Stdout))
}

func run(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("versions", flag.ContinueOnError)
	fs.SetOutput(w)
	data := fs.String("data", "", "directory of the boltstore file (default: a new temporary one)")
	as := fs.String("as", "", "run as the v1 or the v2 program (default: v1, v2, then v1 again)")
	rate := fs.Float64("rate", 200, "migration: values rewritten per second")
	n := fs.Int("n", 12, "widgets the v1 program creates")
	if err := cli.Parse(fs, args, false); err != nil {
		return err
	}
	if *as != "" && *as != "v1" && *as != "v2" {
		return cli.Usagef("-as %q: want v1 or v2", *as)
	}
	if *rate <= 0 || *n <= 0 {
		return cli.Usagef("-rate %v, -n %d: both must be positive", *rate, *n)
	}
	if *data == "" {
		dir, err := os.MkdirTemp("", "steady-versions-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*data = dir
	}
	path := filepath.Join(*data, "widgets.db")
	steps := []string{"v1", "v2", "v1"}
	if *as != "" {
		steps = []string{*as}
	}
	for i, step := range steps {
		if i > 0 {
			fmt.Fprintln(w)
		}
		var err error
		if step == "v1" {
			err = runV1(ctx, w, path, *n)
		} else {
			err = runV2(ctx, w, path, *rate)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// open opens the file and a Store of Widget serving served and storing
// storage.
func open[S, T any](path, served, storage string) (*boltstore.Store, *store.Store[S, T], error) {
	vs, err := widgetVersions(storage)
	if err != nil {
		return nil, nil, err
	}
	b, err := boltstore.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.New[S, T](b, "Widget", store.WithVersion(served, vs))
	if err != nil {
		return nil, nil, errors.Join(err, b.Close())
	}
	return b, st, nil
}

// runV1 is the old program: it serves and stores v1, creates its widgets
// if they are missing, and updates the first one's image.
func runV1(ctx context.Context, w io.Writer, path string, n int) (err error) {
	b, st, err := open[SpecV1, StatusV1](path, "v1", "v1")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	fmt.Fprintln(w, "== the v1 program (serves v1, stores v1)")
	created := 0
	for i := range n {
		_, err := st.As("v1-program").Create(ctx, &store.Object[SpecV1, StatusV1]{
			Meta: store.Meta{Name: fmt.Sprintf("widget-%02d", i)}, Spec: SpecV1{Image: fmt.Sprintf("registry/app:%d", i)}})
		if err == nil {
			created++
		} else if !errors.Is(err, store.ErrAlreadyExists) {
			return err
		}
	}
	fmt.Fprintf(w, "created %d widgets\n", created)
	first, err := st.Get(ctx, "widget-00")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "widget-00 at v1: image=%s ready=%v\n", first.Spec.Image, first.Status.Ready)
	if created == 0 {
		first.Spec.Image += "-patched"
		if _, err := st.As("v1-program").Update(ctx, first); err != nil {
			return err
		}
		first.Status.Ready = true
		if _, err := st.As("v1-program").UpdateStatus(ctx, first); err != nil {
			return err
		}
		fmt.Fprintf(w, "widget-00 updated at v1: image=%s ready=true\n", first.Spec.Image)
	}
	return storedVersions(ctx, w, b)
}

// runV2 is the new program: it serves and stores v2, reads the widgets
// whatever their version, sets replicas and a message on the first, and
// migrates the rest.
func runV2(ctx context.Context, w io.Writer, path string, rate float64) (err error) {
	b, st, err := open[SpecV2, StatusV2](path, "v2", "v2")
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.Close()) }()
	fmt.Fprintln(w, "== the v2 program (serves v2, stores v2)")
	l, err := st.List(ctx, store.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "read %d widgets at v2, %d undecodable; widget-00: containerImage=%s\n",
		len(l.Items), len(l.Undecodable), l.Items[0].Spec.ContainerImage)
	first := l.Items[0]
	first.Spec.Replicas = 3
	if _, err := st.As("v2-program").Update(ctx, first); err != nil {
		return err
	}
	first.Status.Message = "scaled to 3"
	if _, err := st.As("v2-program").UpdateStatus(ctx, first); err != nil {
		return err
	}
	fmt.Fprintln(w, "widget-00 updated at v2: replicas=3 message=\"scaled to 3\"")
	p, err := st.Migrate(ctx, store.MigrateOptions{PerSecond: rate, PageSize: 5, Progress: func(p store.MigrateProgress) {
		fmt.Fprintf(w, "migrate: %s\n", progress(p))
	}})
	if err != nil {
		return err
	}
	if !p.Done {
		return fmt.Errorf("migration did not finish: %s", progress(p))
	}
	return storedVersions(ctx, w, b)
}

// progress is the line the example prints for a Migrate report.
func progress(p store.MigrateProgress) string {
	return fmt.Sprintf("scanned %d, migrated %d, already current %d, undecodable %d, retried %d",
		p.Scanned, p.Migrated, p.Current, p.Undecodable, p.Retried)
}

// storedVersions prints how many widgets are stored at each version, and
// widget-00 as v2 sees it.
func storedVersions(ctx context.Context, w io.Writer, b kv.Backend) error {
	l, err := b.List(ctx, "Widget/", kv.ListOptions{})
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, kvp := range l.KVs {
		var env struct{ Version string }
		if err := json.Unmarshal(kvp.Value, &env); err != nil {
			return err
		}
		counts[env.Version]++
	}
	versions := make([]string, 0, len(counts))
	for v := range counts {
		versions = append(versions, v)
	}
	sort.Strings(versions)
	fmt.Fprint(w, "stored:")
	for _, v := range versions {
		fmt.Fprintf(w, " %s=%d", v, counts[v])
	}
	fmt.Fprintln(w)
	vs, err := widgetVersions("v2")
	if err != nil {
		return err
	}
	st, err := store.New[SpecV2, StatusV2](b, "Widget", store.WithVersion("v2", vs))
	if err != nil {
		return err
	}
	o, err := st.Get(ctx, "widget-00")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "widget-00 as v2 sees it: %+v %+v\n", o.Spec, o.Status)
	return nil
}
