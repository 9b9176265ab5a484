package diff

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mutatePod makes a few differences of the kinds a reconciler sees: a spec
// field, a label, an image, a condition.
func mutatePod(p *testPod) {
	p.Metadata.Generation = 4
	p.Metadata.Labels["tier"] = "backend"
	p.Spec.Containers[0].Image = "registry.example.com/web:1.5.0"
	p.Status.Conditions[1].Status = "False"
}

// Two equal Pod-sized structs: Diff against reflect.DeepEqual (target:
// Diff at most 2x DeepEqual) and go-cmp's cmp.Equal.
func BenchmarkEqualPod(b *testing.B) {
	want, got := newTestPod(), newTestPod()
	b.Run("reflect.DeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !reflect.DeepEqual(want, got) {
				b.Fatal("not equal")
			}
		}
	})
	b.Run("diff.Diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !Diff(want, got).Empty() {
				b.Fatal("not equal")
			}
		}
	})
	b.Run("cmp.Equal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !cmp.Equal(want, got) {
				b.Fatal("not equal")
			}
		}
	})
}

// The same Pod decoded from JSON into map[string]any.
func BenchmarkEqualPodTree(b *testing.B) {
	want, got := testPodTree(b), testPodTree(b)
	b.Run("reflect.DeepEqual", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !reflect.DeepEqual(want, got) {
				b.Fatal("not equal")
			}
		}
	})
	b.Run("diff.Diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !Diff(want, got).Empty() {
				b.Fatal("not equal")
			}
		}
	})
}

// Pod-sized structs with four differences, formatted: Diff plus String
// against cmp.Diff (target: at most 0.5x cmp.Diff).
func BenchmarkDiffPod(b *testing.B) {
	want, got := newTestPod(), newTestPod()
	mutatePod(got)
	b.Run("cmp.Diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if cmp.Diff(want, got) == "" {
				b.Fatal("no diff")
			}
		}
	})
	b.Run("diff.Diff+String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if Diff(want, got).String() == "" {
				b.Fatal("no diff")
			}
		}
	})
	b.Run("diff.Diff+String/ignore-status", func(b *testing.B) {
		opt := Ignore(MustParsePath(".status"), MustParsePath(`.metadata.labels["pod-template-hash"]`))
		b.ReportAllocs()
		for b.Loop() {
			if Diff(want, got, opt).String() == "" {
				b.Fatal("no diff")
			}
		}
	})
}

func BenchmarkDiffPodTree(b *testing.B) {
	want, got := testPodTree(b), testPodTree(b)
	got["metadata"].(map[string]any)["generation"] = 4.0
	got["spec"].(map[string]any)["restartPolicy"] = "Never"
	b.Run("cmp.Diff", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if cmp.Diff(want, got) == "" {
				b.Fatal("no diff")
			}
		}
	})
	b.Run("diff.Diff+String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if Diff(want, got).String() == "" {
				b.Fatal("no diff")
			}
		}
	})
}

func BenchmarkHashPod(b *testing.B) {
	pod, tree := newTestPod(), testPodTree(b)
	ignore := Ignore(MustParsePath(".status"), MustParsePath(`.metadata.annotations["steady.dev/hash"]`))
	b.Run("typed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Hash(pod)
		}
	})
	b.Run("typed/ignore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Hash(pod, ignore)
		}
	})
	b.Run("tree", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Hash(tree)
		}
	})
}
