package main

// vmcp worker: a Temporal worker for executor: temporal. It reads the same
// vmcp.yaml as vmcp run, connects the backends (the backend connections
// live here, not in vmcp run) and polls executor.taskQueue for runs and
// backend calls until the first SIGINT or SIGTERM, which lets the calls in
// flight finish (at most --shutdown-grace) before it exits.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

func newWorkerCmd(ios streams) *cobra.Command {
	var configPath, logLevel, identity string
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "worker [--config vmcp.yaml]",
		Short: "Run a Temporal worker for executor: temporal",
		Long: `Run a Temporal worker: it performs the runs that vmcp run (with
executor: {kind: temporal} in its config) starts on Temporal, calling the
config's backends. Start as many as you like, on as many machines; they
share executor.taskQueue. Without --config it reads ./vmcp.yaml.

The first SIGINT (Ctrl-C) or SIGTERM stops polling and gives the backend
calls in flight --shutdown-grace to finish; the runs themselves go on, on
the other workers.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(ios.err, logLevel)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(configPath, ios.err)
			if err != nil {
				return err
			}
			if !cfg.Executor.Temporal() {
				return failuref("%s: executor.kind is %q; vmcp worker serves the Temporal executor: set executor: {kind: temporal} (and address, namespace, taskQueue if not the defaults)", cfg.Path, cfg.Executor.Kind)
			}
			if identity == "" {
				identity = defaultIdentity()
			}
			// telemetry: the worker's workflow, activity and backend call
			// spans, in each run's trace.
			tracing, err := startTracing(cfg, log, identity)
			if err != nil {
				return failuref("%v", err)
			}
			if tracing != nil {
				defer stopTracing(tracing, log)
			}
			c, err := dialTemporal(cfg.Executor, log, tracing)
			if err != nil {
				return failuref("%v", err)
			}
			defer c.Close()
			mgr, err := mcpclient.Connect(cmd.Context(), cfg.Backends, mcpclient.Options{
				Logger: log, ClientName: "vmcp", ClientVersion: version, MaxResultBytes: cfg.Limits.MaxResultBytes,
			})
			if err != nil {
				return failuref("%v", err)
			}
			defer mgr.Close()
			var backend runtime.Backend = mgr
			if tracing != nil {
				backend = tracing.Backend(backend)
			}
			backend = runtime.LimitCalls(backend, callLimits(cfg))
			w := temporalrun.NewWorker(c, cfg.Executor.TaskQueue, backend, temporalrun.WorkerOptions{
				Identity: identity, StopTimeout: grace,
				Local: temporalrun.LocalOptions{Tools: cfg.Executor.QuickTools, Off: !cfg.Executor.LocalActivities},
			})
			if err := w.Start(); err != nil {
				return failuref("starting the worker on task queue %q: %v", cfg.Executor.TaskQueue, err)
			}
			log.Info("worker polling", "address", cfg.Executor.Address, "namespace", cfg.Executor.Namespace, "task_queue", cfg.Executor.TaskQueue, "backends", len(cfg.Backends))
			<-cmd.Context().Done()
			log.Info("worker stopping", "grace", grace)
			w.Stop()
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "the config file (default ./vmcp.yaml)")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&identity, "identity", "", "the worker's name in Temporal (default pid@host)")
	f.DurationVar(&grace, "shutdown-grace", defaultShutdownGrace, "after the first Ctrl-C or SIGTERM, how long backend calls in flight may go on")
	return cmd
}

// defaultIdentity is the Temporal SDK's default worker identity, pid@host.
func defaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%d@%s", os.Getpid(), host)
}

// loadConfig loads configPath (./vmcp.yaml when empty), printing config
// errors with their source lines on stderr.
func loadConfig(configPath string, diagOut io.Writer) (*config.Config, error) {
	if configPath == "" {
		if _, err := os.Stat(defaultConfig); err != nil {
			return nil, usageErrorf("no --config given and there is no ./%s: pass --config FILE", defaultConfig)
		}
		configPath = defaultConfig
	}
	cfg, err := config.Load(configPath, os.LookupEnv)
	if err != nil {
		var cerr *config.Error
		if errors.As(err, &cerr) {
			errs := cerr.Diags.Sorted()
			diag.Print(diagOut, errs, diag.Text, cerr.Sources)
			return nil, failuref("%d error(s) in the config %s", len(errs.Errors()), configPath)
		}
		return nil, failuref("%v", err)
	}
	return cfg, nil
}
