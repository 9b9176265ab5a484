package diff

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Pod-like type for tests and benchmarks: the shape of a Kubernetes Pod
// without depending on Kubernetes.
type (
	testPod struct {
		APIVersion string        `json:"apiVersion"`
		Kind       string        `json:"kind"`
		Metadata   testObjMeta   `json:"metadata"`
		Spec       testPodSpec   `json:"spec"`
		Status     testPodStatus `json:"status"`
	}
	testObjMeta struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		ResourceVersion   string            `json:"resourceVersion"`
		Generation        int64             `json:"generation"`
		CreationTimestamp time.Time         `json:"creationTimestamp"`
		Labels            map[string]string `json:"labels,omitempty"`
		Annotations       map[string]string `json:"annotations,omitempty"`
		OwnerReferences   []testOwnerRef    `json:"ownerReferences,omitempty"`
		Finalizers        []string          `json:"finalizers,omitempty"`
	}
	testOwnerRef struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		UID        string `json:"uid"`
		Controller *bool  `json:"controller,omitempty"`
	}
	testPodSpec struct {
		Containers         []testContainer   `json:"containers" steady:"keys=name"`
		RestartPolicy      string            `json:"restartPolicy"`
		NodeName           string            `json:"nodeName,omitempty"`
		ServiceAccountName string            `json:"serviceAccountName,omitempty"`
		NodeSelector       map[string]string `json:"nodeSelector,omitempty"`
		Tolerations        []testToleration  `json:"tolerations,omitempty"`
		Volumes            []testVolume      `json:"volumes,omitempty" steady:"keys=name"`
		TerminationGrace   *int64            `json:"terminationGracePeriodSeconds,omitempty"`
		Priority           *int32            `json:"priority,omitempty"`
	}
	testContainer struct {
		Name         string               `json:"name"`
		Image        string               `json:"image"`
		Command      []string             `json:"command,omitempty"`
		Args         []string             `json:"args,omitempty"`
		Ports        []testPort           `json:"ports,omitempty" steady:"keys=containerPort,protocol"`
		Env          []testEnv            `json:"env,omitempty" steady:"keys=name"`
		Resources    testResources        `json:"resources"`
		VolumeMounts []testVolumeMount    `json:"volumeMounts,omitempty"`
		Probe        *testProbe           `json:"readinessProbe,omitempty"`
		Extra        map[string]any       `json:"extra,omitempty"`
		Pull         string               `json:"imagePullPolicy"`
		Sec          *testSecurityContext `json:"securityContext,omitempty"`
	}
	testSecurityContext struct {
		RunAsUser    *int64 `json:"runAsUser,omitempty"`
		RunAsNonRoot *bool  `json:"runAsNonRoot,omitempty"`
	}
	testPort struct {
		Name          string `json:"name,omitempty"`
		ContainerPort int32  `json:"containerPort"`
		Protocol      string `json:"protocol"`
	}
	testEnv struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	testResources struct {
		Limits   map[string]string `json:"limits,omitempty"`
		Requests map[string]string `json:"requests,omitempty"`
	}
	testVolumeMount struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
		ReadOnly  bool   `json:"readOnly,omitempty"`
	}
	testProbe struct {
		Path                string `json:"path"`
		Port                int32  `json:"port"`
		InitialDelaySeconds int32  `json:"initialDelaySeconds"`
		PeriodSeconds       int32  `json:"periodSeconds"`
	}
	testToleration struct {
		Key      string `json:"key"`
		Operator string `json:"operator"`
		Effect   string `json:"effect"`
	}
	testVolume struct {
		Name      string  `json:"name"`
		ConfigMap *string `json:"configMap,omitempty"`
		EmptyDir  bool    `json:"emptyDir,omitempty"`
	}
	testPodStatus struct {
		Phase      string           `json:"phase"`
		PodIP      string           `json:"podIP"`
		HostIP     string           `json:"hostIP"`
		StartTime  *time.Time       `json:"startTime,omitempty"`
		Conditions []testCondition  `json:"conditions" steady:"keys=type"`
		Containers []testContStatus `json:"containerStatuses"`
	}
	testCondition struct {
		Type               string    `json:"type"`
		Status             string    `json:"status"`
		Reason             string    `json:"reason,omitempty"`
		Message            string    `json:"message,omitempty"`
		LastTransitionTime time.Time `json:"lastTransitionTime"`
		ObservedGeneration int64     `json:"observedGeneration"`
	}
	testContStatus struct {
		Name         string `json:"name"`
		Ready        bool   `json:"ready"`
		RestartCount int32  `json:"restartCount"`
		Image        string `json:"image"`
		ImageID      string `json:"imageID"`
		ContainerID  string `json:"containerID"`
	}
)

// newTestPod builds a fresh, fully populated Pod sharing no memory with any
// other call's result.
func newTestPod() *testPod {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	start := t0.Add(3 * time.Second)
	yes := true
	grace, prio := int64(30), int32(1000)
	cm := "web-config"
	uid := int64(1000)
	container := func(name, image string, port int32) testContainer {
		return testContainer{
			Name:    name,
			Image:   image,
			Command: []string{"/bin/" + name},
			Args:    []string{"--port=" + string(rune('0'+port%10)), "--verbose", "--log-format=json"},
			Ports: []testPort{
				{Name: "http", ContainerPort: port, Protocol: "TCP"},
				{Name: "metrics", ContainerPort: 9090, Protocol: "TCP"},
			},
			Env: []testEnv{
				{Name: "LOG_LEVEL", Value: "info"},
				{Name: "GOMAXPROCS", Value: "2"},
				{Name: "SERVICE_NAME", Value: name},
			},
			Resources: testResources{
				Limits:   map[string]string{"cpu": "500m", "memory": "256Mi"},
				Requests: map[string]string{"cpu": "100m", "memory": "128Mi"},
			},
			VolumeMounts: []testVolumeMount{{Name: "config", MountPath: "/etc/" + name, ReadOnly: true}},
			Probe:        &testProbe{Path: "/healthz", Port: port, InitialDelaySeconds: 5, PeriodSeconds: 10},
			Pull:         "IfNotPresent",
			Sec:          &testSecurityContext{RunAsUser: &uid, RunAsNonRoot: &yes},
		}
	}
	return &testPod{
		APIVersion: "v1",
		Kind:       "Pod",
		Metadata: testObjMeta{
			Name:              "web-7d4b9c8f6d-x2k4q",
			Namespace:         "production",
			UID:               "6f1c2a3b-4d5e-4f60-8a9b-0c1d2e3f4a5b",
			ResourceVersion:   "123456",
			Generation:        3,
			CreationTimestamp: t0,
			Labels: map[string]string{
				"app.kubernetes.io/name":    "web",
				"app.kubernetes.io/version": "1.4.2",
				"pod-template-hash":         "7d4b9c8f6d",
				"tier":                      "frontend",
			},
			Annotations: map[string]string{
				"steady.dev/hash":      "9f86d081884c7d65",
				"prometheus.io/scrape": "true",
			},
			OwnerReferences: []testOwnerRef{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c8f6d", UID: "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9", Controller: &yes}},
			Finalizers:      []string{"steady.dev/cleanup"},
		},
		Spec: testPodSpec{
			Containers: []testContainer{
				container("web", "registry.example.com/web:1.4.2", 8080),
				{
					Name:      "sidecar",
					Image:     "registry.example.com/proxy:2.0.1",
					Ports:     []testPort{{ContainerPort: 15001, Protocol: "TCP"}},
					Resources: testResources{Limits: map[string]string{"cpu": "100m"}},
					Pull:      "IfNotPresent",
				},
			},
			RestartPolicy:      "Always",
			NodeName:           "node-17",
			ServiceAccountName: "web",
			NodeSelector:       map[string]string{"kubernetes.io/os": "linux"},
			Tolerations:        []testToleration{{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute"}},
			Volumes:            []testVolume{{Name: "config", ConfigMap: &cm}, {Name: "scratch", EmptyDir: true}},
			TerminationGrace:   &grace,
			Priority:           &prio,
		},
		Status: testPodStatus{
			Phase:     "Running",
			PodIP:     "10.244.3.17",
			HostIP:    "192.168.1.17",
			StartTime: &start,
			Conditions: []testCondition{
				{Type: "Initialized", Status: "True", LastTransitionTime: t0, ObservedGeneration: 3},
				{Type: "Ready", Status: "True", LastTransitionTime: start, ObservedGeneration: 3},
				{Type: "PodScheduled", Status: "True", LastTransitionTime: t0, ObservedGeneration: 3},
			},
			Containers: []testContStatus{
				{Name: "web", Ready: true, Image: "registry.example.com/web:1.4.2", ImageID: "sha256:4f1c8e2a", ContainerID: "containerd://a1b2c3"},
			},
		},
	}
}

// testPodTree is newTestPod as decoded JSON.
func testPodTree(t testing.TB) map[string]any {
	data, err := json.Marshal(newTestPod())
	require.NoError(t, err)
	var tree map[string]any
	require.NoError(t, json.Unmarshal(data, &tree))
	return tree
}

func TestTestPodIsPodSized(t *testing.T) {
	data, err := json.Marshal(newTestPod())
	require.NoError(t, err)
	require.InDelta(t, 2048, len(data), 512, "the benchmark Pod is about 2 KB of JSON (2.5 KB)")
}
