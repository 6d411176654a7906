package helm

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/vmcp-dev/vmcp/config"
)

// helmBin is the helm the Makefile builds (make helm).
func helmBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("VMCP_BIN_CACHE")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "vmcp", "bin")
	}
	p := filepath.Join(dir, "helm-v4.3.2")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("helm v4.3.2 is not built at %s: run make helm (make test does)", p)
	}
	return p
}

func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(helmBin(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// serviceMonitor is the part of monitoring.coreos.com/v1 ServiceMonitor
// the chart writes; decoding strictly into it fails on anything else.
type serviceMonitor struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   map[string]any     `json:"metadata"`
	Spec       serviceMonitorSpec `json:"spec"`
}

type serviceMonitorSpec struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	Endpoints []struct {
		Port          string `json:"port"`
		Path          string `json:"path"`
		Interval      string `json:"interval"`
		Authorization *struct {
			Type        string                   `json:"type"`
			Credentials corev1.SecretKeySelector `json:"credentials"`
		} `json:"authorization,omitempty"`
	} `json:"endpoints"`
}

// rendered is a chart rendering, decoded.
type rendered struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMaps map[string]*corev1.ConfigMap
	monitor    *serviceMonitor
	kinds      []string
}

// strict decodes a YAML document into v, refusing unknown fields.
func strict(t *testing.T, doc string, v any) {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("a rendered document is not YAML: %v\n%s", err, doc)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("a rendered document does not decode strictly into %T: %v\n%s", v, err, doc)
	}
}

func render(t *testing.T, args ...string) rendered {
	t.Helper()
	if out, err := helm(t, append([]string{"lint", "vmcp", "--strict"}, args...)...); err != nil {
		t.Fatalf("helm lint %v: %v\n%s", args, err, out)
	}
	out, err := helm(t, append([]string{"template", "r", "vmcp"}, args...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, out)
	}
	r := rendered{configMaps: map[string]*corev1.ConfigMap{}}
	for _, doc := range strings.Split(out, "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		var head struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		r.kinds = append(r.kinds, head.Kind)
		switch head.Kind {
		case "Deployment":
			r.deployment = &appsv1.Deployment{}
			strict(t, doc, r.deployment)
		case "Service":
			r.service = &corev1.Service{}
			strict(t, doc, r.service)
		case "ConfigMap":
			var cm corev1.ConfigMap
			strict(t, doc, &cm)
			r.configMaps[cm.Name] = &cm
		case "ServiceAccount":
			strict(t, doc, &corev1.ServiceAccount{})
		case "ServiceMonitor":
			r.monitor = &serviceMonitor{}
			strict(t, doc, r.monitor)
		default:
			t.Fatalf("the chart renders a %s, which this test does not check", head.Kind)
		}
	}
	slices.Sort(r.kinds)
	return r
}

// checkConfig loads the rendered vmcp.yaml with vmcp's own loader, the
// secrets' variables set as the pod's environment sets them.
func checkConfig(t *testing.T, cm *corev1.ConfigMap, env map[string]string) *config.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "vmcp.yaml")
	if err := os.WriteFile(p, []byte(cm.Data["vmcp.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the chart's vmcp.yaml does not load: %v\n%s", err, cm.Data["vmcp.yaml"])
	}
	return cfg
}

// envFrom maps the container's secret-backed variables to "secret/key".
func envFrom(d *appsv1.Deployment) map[string]string {
	out := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			out[e.Name] = e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	return out
}

func TestChartDefaults(t *testing.T) {
	r := render(t)
	if want := []string{"ConfigMap", "Deployment", "Service", "ServiceAccount"}; !slices.Equal(r.kinds, want) {
		t.Fatalf("kinds = %v; want %v", r.kinds, want)
	}
	d := r.deployment
	c := d.Spec.Template.Spec.Containers[0]
	pod := d.Spec.Template.Spec.SecurityContext
	switch {
	case *d.Spec.Replicas != 1:
		t.Errorf("replicas = %d; want 1", *d.Spec.Replicas)
	case pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || *pod.RunAsUser != 65532:
		t.Errorf("pod security context = %+v; want non-root 65532", pod)
	case c.SecurityContext == nil || !*c.SecurityContext.ReadOnlyRootFilesystem || *c.SecurityContext.AllowPrivilegeEscalation:
		t.Errorf("container security context = %+v; want a read-only root, no escalation", c.SecurityContext)
	case c.ReadinessProbe.Exec == nil || !slices.Equal(c.ReadinessProbe.Exec.Command, []string{"/vmcp", "ready", "--url", "http://127.0.0.1:8080"}):
		t.Errorf("readiness probe = %+v; want vmcp ready against the pod's listener", c.ReadinessProbe)
	case c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz":
		t.Errorf("liveness probe = %+v; want GET /healthz", c.LivenessProbe)
	case !slices.Equal(c.Args, []string{"run", "--config", "/etc/vmcp/vmcp.yaml", "--shutdown-grace", "30s"}):
		t.Errorf("args = %v", c.Args)
	case *d.Spec.Template.Spec.TerminationGracePeriodSeconds != 40:
		t.Errorf("termination grace = %d; want the drain's 30s + 10", *d.Spec.Template.Spec.TerminationGracePeriodSeconds)
	}
	if got := envFrom(d); got["VMCP_TOKEN"] != "vmcp-token/token" {
		t.Errorf("secret env = %v; want VMCP_TOKEN from vmcp-token/token", got)
	}
	if r.service.Spec.Ports[0].Port != 8080 || r.service.Spec.Selector["app.kubernetes.io/instance"] != "r" {
		t.Errorf("service = %+v", r.service.Spec)
	}
	cfg := checkConfig(t, r.configMaps["r-vmcp"], map[string]string{"VMCP_TOKEN": "s3cret"})
	if cfg.Server.Listen != "0.0.0.0:8080" || !cfg.Authoring.Enabled || cfg.State.Store != "memory" {
		t.Errorf("vmcp.yaml = listen %q, authoring %v, store %q; want 0.0.0.0:8080, authoring, memory", cfg.Server.Listen, cfg.Authoring.Enabled, cfg.State.Store)
	}
}

func TestChartReplicatedOnPostgres(t *testing.T) {
	r := render(t, "-f", "vmcp/values-replicated.yaml")
	if want := []string{"ConfigMap", "ConfigMap", "Deployment", "Service", "ServiceAccount", "ServiceMonitor"}; !slices.Equal(r.kinds, want) {
		t.Fatalf("kinds = %v; want %v", r.kinds, want)
	}
	if n := *r.deployment.Spec.Replicas; n != 3 {
		t.Errorf("replicas = %d; want 3", n)
	}
	if got := envFrom(r.deployment); got["VMCP_DATABASE_URL"] != "vmcp-postgres/url" || got["METRICS_TOKEN"] != "vmcp-token/metrics" {
		t.Errorf("secret env = %v; want the database URL and the metrics token from their Secrets", got)
	}
	cfg := checkConfig(t, r.configMaps["r-vmcp"], map[string]string{"VMCP_TOKEN": "a", "METRICS_TOKEN": "b", "VMCP_DATABASE_URL": "postgres://db/vmcp"})
	if cfg.State.Store != "postgres" || cfg.State.URL != "postgres://db/vmcp" {
		t.Errorf("vmcp.yaml state = %+v; want postgres at the Secret's URL", cfg.State)
	}
	ep := r.monitor.Spec.Endpoints[0]
	if ep.Path != "/metrics" || ep.Port != "http" || ep.Authorization == nil || ep.Authorization.Credentials.Name != "vmcp-token" {
		t.Errorf("service monitor endpoint = %+v; want /metrics on http with the metrics token", ep)
	}
	// The dashboard is valid JSON and asks only for metrics vmcp exports.
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(r.configMaps["r-vmcp-dashboard"].Data["vmcp.json"]), &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard is not a Grafana dashboard: %v", err)
	}
	known := []string{"vmcp_runs_total", "vmcp_run_duration_seconds_bucket", "vmcp_runs_in_flight", "vmcp_steps_total", "vmcp_step_retries_total",
		"vmcp_steps_in_flight", "vmcp_backend_call_duration_seconds_bucket", "vmcp_backend_call_errors_total", "vmcp_backend_calls_in_flight"}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, w := range strings.FieldsFunc(tg.Expr, func(r rune) bool { return !(r == '_' || r >= 'a' && r <= 'z') }) {
				if strings.HasPrefix(w, "vmcp_") && !slices.Contains(known, w) {
					t.Errorf("the dashboard asks for %s, which vmcp does not export", w)
				}
			}
		}
	}
}

func TestChartRefusesReplicasWithoutPostgres(t *testing.T) {
	out, err := helm(t, "template", "r", "vmcp", "--set", "replicaCount=2")
	if err == nil || !strings.Contains(out, `replicaCount is 2 but config.state.store is "memory"`) {
		t.Errorf("helm template with 2 replicas on memory = %v\n%s\nwant the chart's refusal", err, out)
	}
}
