package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// observeFlags are serve's logging flags.
type observeFlags struct {
	logFormat string
	metrics   string
}

func (o *observeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.logFormat, "log-format", "text", "format of the log records on stderr: `text` or json")
	cmd.Flags().StringVar(&o.metrics, "metrics", "", "serve Prometheus metrics (rpc_server_call_duration_seconds) at `URL`, e.g. http://127.0.0.1:9464/metrics")
	cmd.Long += "\n\n" + telemetryHelp
}

// logger returns the logger serve writes to stderr (never stdout, which
// stdio: serves on): debug level with -v, info otherwise.
func (o *observeFlags) logger(verbose bool) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if verbose {
		opts.Level = slog.LevelDebug
	}
	switch o.logFormat {
	case "text", "":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, usageErrorf("--log-format %q: want text or json", o.logFormat)
}
