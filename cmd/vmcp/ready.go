package main

// `vmcp ready`: asks a running vmcp's GET /readyz and exits 0 when it is
// ready, 1 when not (a backend down, or draining). It is the readiness
// probe of the container image, which has no shell or curl: run inside
// the pod it sends the token from --token or $VMCP_TOKEN, so the probe
// needs no token in the pod spec's text.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newReadyCmd(ios streams) *cobra.Command {
	var base, token string
	cmd := &cobra.Command{
		Use:   "ready [--url http://127.0.0.1:8080]",
		Short: "Exit 0 when a running vmcp is ready (GET /readyz), 1 when it is not",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv("VMCP_TOKEN")
			}
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, strings.TrimSuffix(base, "/")+"/readyz", nil)
			if err != nil {
				return usageErrorf("--url %q: %v", base, err)
			}
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
			if err != nil {
				return failuref("%v", err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			fmt.Fprintln(ios.out, strings.TrimSpace(string(body)))
			if res.StatusCode != http.StatusOK {
				return failuref("not ready: %s", res.Status)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&base, "url", "http://127.0.0.1:8080", "base URL of the running vmcp")
	cmd.Flags().StringVar(&token, "token", "", "bearer token (default $VMCP_TOKEN)")
	return cmd
}
