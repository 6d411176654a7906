package main

// `vmcpc tools pull` and `vmcpc compile --config`: the two ways the
// compiler learns the backends' real tool schemas. Both connect to every
// backend in vmcp.yaml (mcpclient), list its tools and build a
// catalog. pull saves it as a lock file; compile --config checks the
// workflows against it directly, through the same lock-file path that
// `compile --tools` reads, so online and offline checks cannot drift apart.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/mcpclient"
)

func newToolsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "Work with the backends' tool schemas",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return &exitErr{code: exitUsage}
		},
	}
	cmd.AddCommand(newToolsPullCmd())
	return cmd
}

func newToolsPullCmd() *cobra.Command {
	var configPath, output string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "pull",
		Short: "Save the backends' tool schemas to a lock file",
		Long: `pull connects to every backend in the config (starting stdio backends,
dialing HTTP ones), lists their tools and writes the tool names and input
schemas as JSON: a lock file for 'vmcpc compile --tools', which then checks
tool references offline, for example in CI.

Exit status: 0 when every backend answered, 1 otherwise.`,
		Example: `  vmcpc tools pull --config vmcp.yaml -o tools.lock.json
  vmcpc compile --tools tools.lock.json workflows/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			cfg, err := loadConfig(configPath, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			cat, err := pullCatalog(ctx, cfg, cmd.ErrOrStderr(), verbose)
			if err != nil {
				return err
			}
			data, err := cat.Encode()
			if err != nil {
				return failed(err)
			}
			if output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
			} else {
				err = os.WriteFile(output, data, 0o644)
			}
			if err != nil {
				return failed(err)
			}
			if output != "-" {
				n := 0
				for _, b := range cat.Backends {
					n += len(b.Tools)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: %s, %s\n", output,
					plural(len(cat.Backends), "backend"), plural(n, "tool"))
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configPath, "config", "vmcp.yaml", "the vmcp config `FILE` naming the backends")
	fl.StringVarP(&output, "output", "o", "-", "write the lock file to `FILE` (- for stdout)")
	fl.BoolVarP(&verbose, "verbose", "v", false, "log backend connections and their stderr")
	return cmd
}

// pullCatalog connects to the config's backends and returns their tools.
// Errors are wrapped for the exit code.
func pullCatalog(ctx context.Context, cfg *config.Config, stderr io.Writer, verbose bool) (*catalog.Catalog, error) {
	level := slog.LevelWarn
	if verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	mgr, err := mcpclient.Connect(ctx, cfg.Backends, mcpclient.Options{Logger: log, ClientName: "vmcpc"})
	if err != nil {
		return nil, failed(err)
	}
	defer mgr.Close()
	return mgr.Catalog(), nil
}

// loadConfig loads vmcp.yaml, printing its problems as diagnostics.
func loadConfig(path string, stderr io.Writer) (*config.Config, error) {
	cfg, err := config.Load(path, os.LookupEnv)
	if err == nil {
		return cfg, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		return nil, failed(err)
	}
	src, _ := os.ReadFile(path)
	if perr := diag.Print(stderr, ce.Diags, diag.Text, diag.Sources{filepath.ToSlash(path): src}); perr != nil {
		return nil, failed(err)
	}
	return nil, reported()
}

// withConfig adds --config to the compile command. With it, compile
// connects to the config's backends and checks tool references against
// their real tool lists; without file arguments it compiles the config's
// own workflow sources (its compositeTools and `workflows:` files). The
// catalog reaches the compiler through a temporary lock file read by the
// --tools code path.
func withConfig(cmd *cobra.Command) *cobra.Command {
	var configPath string
	cmd.Flags().StringVar(&configPath, "config", "", "check tool references against the backends in the vmcp config `FILE` (connects to them)")
	compile := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if configPath == "" {
			return compile(c, args)
		}
		if c.Flags().Changed("tools") {
			return usageErrorf("--config and --tools both supply tool schemas; use one")
		}
		ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		cfg, err := loadConfig(configPath, c.ErrOrStderr())
		if err != nil {
			return err
		}
		cat, err := pullCatalog(ctx, cfg, c.ErrOrStderr(), false)
		if err != nil {
			return err
		}
		if len(args) == 0 {
			args = cfg.Sources()
			if len(args) == 0 {
				return usageErrorf("%s has no compositeTools and no workflows; name the files to compile", configPath)
			}
		}
		dir, err := os.MkdirTemp("", "vmcpc-tools-")
		if err != nil {
			return failed(err)
		}
		defer os.RemoveAll(dir)
		data, err := cat.Encode()
		if err != nil {
			return failed(err)
		}
		lock := filepath.Join(dir, "tools.lock.json")
		if err := os.WriteFile(lock, data, 0o600); err != nil {
			return failed(err)
		}
		if err := c.Flags().Set("tools", lock); err != nil {
			return failed(err)
		}
		return compile(c, args)
	}
	return cmd
}
