package kubefake

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// App is a custom resource with the spec of steady's side (package
// ctlbench's ~200 bytes) and one status field, the typed object a
// client-go controller of a CRD caches. (A Deployment would carry the
// same data in a PodTemplateSpec of mostly empty fields, about 3 KB of
// heap per copy, and measure the type rather than the library.)
type App struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AppSpec   `json:"spec"`
	Status            AppStatus `json:"status,omitempty"`
}

// AppSpec is App's desired state.
type AppSpec struct {
	Replicas int32             `json:"replicas"`
	Image    string            `json:"image"`
	Args     []string          `json:"args"`
	Selector map[string]string `json:"selector"`
}

// AppStatus is App's observed state.
type AppStatus struct {
	ReadyReplicas int32 `json:"readyReplicas"`
}

// AppList is a list of Apps.
type AppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []App `json:"items"`
}

// DeepCopy copies a, as generated deepcopy code would.
func (a *App) DeepCopy() *App {
	if a == nil {
		return nil
	}
	out := &App{TypeMeta: a.TypeMeta, Spec: a.Spec, Status: a.Status}
	a.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Args = append([]string(nil), a.Spec.Args...)
	out.Spec.Selector = maps.Clone(a.Spec.Selector)
	return out
}

// DeepCopyObject implements runtime.Object.
func (a *App) DeepCopyObject() runtime.Object { return a.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *AppList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &AppList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]App, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopy()
		}
	}
	return out
}

// groupVersion is App's API group and version.
var groupVersion = schema.GroupVersion{Group: "example.com", Version: "v1"}

func addToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(groupVersion, &App{}, &AppList{})
	metav1.AddToGroupVersion(s, groupVersion)
	return nil
}
