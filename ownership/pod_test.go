package ownership

import (
	"encoding/json"
	"testing"
)

// podJSON is a Pod-sized object (about 2 KB of JSON, about 100 leaves).
const podJSON = `{
 "metadata": {
  "name": "web-7d4b9c6f5-x2x9k", "namespace": "production", "uid": "6f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f",
  "labels": {"app": "web", "tier": "frontend", "version": "v1.4.2", "pod-template-hash": "7d4b9c6f5", "team": "payments"},
  "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"}
 },
 "spec": {
  "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
  "serviceAccountName": "web", "nodeName": "node-17", "schedulerName": "default-scheduler", "priority": 0,
  "securityContext": {"runAsNonRoot": true, "runAsUser": 1000, "fsGroup": 2000},
  "nodeSelector": {"kubernetes.io/os": "linux", "pool": "general"},
  "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
  "containers": [
   {"name": "web", "image": "registry.example.com/web:1.4.2", "imagePullPolicy": "IfNotPresent",
    "args": ["--port=8080", "--log-level=info"],
    "ports": [{"containerPort": 8080, "protocol": "TCP", "name": "http"}, {"containerPort": 9090, "protocol": "TCP", "name": "metrics"}],
    "env": [{"name": "LOG_FORMAT", "value": "json"}, {"name": "DB_HOST", "value": "db.production.svc"}, {"name": "DB_PORT", "value": "5432"}, {"name": "CACHE_TTL", "value": "300s"}],
    "resources": {"limits": {"cpu": "500m", "memory": "512Mi"}, "requests": {"cpu": "250m", "memory": "256Mi"}},
    "volumeMounts": [{"name": "config", "mountPath": "/etc/web", "readOnly": true}, {"name": "cache", "mountPath": "/var/cache/web"}],
    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}, "initialDelaySeconds": 10, "periodSeconds": 10, "failureThreshold": 3},
    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5},
    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"},
   {"name": "sidecar", "image": "registry.example.com/proxy:2.1.0", "imagePullPolicy": "IfNotPresent",
    "ports": [{"containerPort": 15001, "protocol": "TCP", "name": "proxy"}],
    "env": [{"name": "UPSTREAM", "value": "127.0.0.1:8080"}, {"name": "MODE", "value": "sidecar"}],
    "resources": {"limits": {"cpu": "100m", "memory": "128Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}},
    "volumeMounts": [{"name": "certs", "mountPath": "/etc/certs", "readOnly": true}],
    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}
  ],
  "volumes": [
   {"name": "config", "configMap": {"name": "web-config", "defaultMode": 420}},
   {"name": "cache", "emptyDir": {"sizeLimit": "1Gi"}},
   {"name": "certs", "secret": {"secretName": "web-certs", "defaultMode": 256}}
  ]
 }
}`

// podSchema makes the Pod's lists keyed the way Kubernetes does.
var podSchema = mustSchema(map[string]Strategy{
	".spec.containers":                 Keyed("name"),
	".spec.containers[*].ports":        Keyed("containerPort", "protocol"),
	".spec.containers[*].env":          Keyed("name"),
	".spec.containers[*].volumeMounts": Keyed("mountPath"),
	".spec.volumes":                    Keyed("name"),
})

func podTree(t testing.TB) map[string]any { return obj(t, podJSON) }

func podJSONSize(t testing.TB) int {
	b, err := json.Marshal(podTree(t))
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// splitLeaves returns n partial configs of tree that together hold every
// leaf, leaf i going to config i%n (in a deterministic walk order). Keyed
// list items keep their key fields in every config that has part of them.
func splitLeaves(tree map[string]any, sch *snode, n int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{}
	}
	counter := 0
	var walkMap func(src map[string]any, sch *snode, dst []map[string]any)
	walkMap = func(src map[string]any, sch *snode, dst []map[string]any) {
		for _, k := range sortedKeys(src) {
			v := src[k]
			switch x := v.(type) {
			case map[string]any:
				sub := make([]map[string]any, n)
				for i := range sub {
					sub[i] = map[string]any{}
				}
				walkMap(x, sch.field(k), sub)
				for i := range dst {
					if len(sub[i]) > 0 {
						dst[i][k] = sub[i]
					}
				}
			case []any:
				if sch.field(k).strategy() == stratKeyed {
					keys := sch.field(k).strat.keys
					lists := make([][]any, n)
					for _, it := range x {
						sub := make([]map[string]any, n)
						for i := range sub {
							sub[i] = map[string]any{}
						}
						walkMap(it.(map[string]any), sch.field(k).item(), sub)
						for i := range sub {
							if len(sub[i]) > 0 {
								for _, kk := range keys {
									sub[i][kk] = it.(map[string]any)[kk]
								}
								lists[i] = append(lists[i], sub[i])
							}
						}
					}
					for i := range dst {
						if len(lists[i]) > 0 {
							dst[i][k] = lists[i]
						}
					}
					continue
				}
				dst[counter%n][k] = v
				counter++
			default:
				dst[counter%n][k] = v
				counter++
			}
		}
	}
	walkMap(tree, sch, out)
	return out
}
