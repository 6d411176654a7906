// Package helm checks the Helm chart in deploy/helm/vmcp (its own module,
// so that the Kubernetes API types it decodes into stay out of vmcp's
// go.mod). chart_test.go runs the real helm (v4, built into vmcp's tool
// cache by `make helm`) to lint and render the chart for its default
// values and for values-replicated.yaml, and decodes every rendered
// document strictly into its Kubernetes type: a field the API does not
// know fails the test.
package helm
