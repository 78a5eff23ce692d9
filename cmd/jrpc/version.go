package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func init() {
	// --version prints what jrpc version does: the version line and the
	// modules jrpc was built from.
	var full strings.Builder
	printVersion(&full)
	rootCmd.Version = full.String()
	rootCmd.SetVersionTemplate("{{.Version}}")
	// No -v shorthand: -v means verbose in every command.
	rootCmd.Flags().Bool("version", false, "print jrpc's version")
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print jrpc's version, the library's and Go's (also: jrpc --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			printVersion(cmd.OutOrStdout())
			return nil
		},
	})
}

// version is the one-line version: the module version (or the VCS revision
// of a build from a checkout), the Go version and the platform.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown version) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "(devel)"
		if rev := buildSetting(bi, "vcs.revision"); rev != "" {
			v += " " + rev[:min(12, len(rev))]
			if buildSetting(bi, "vcs.modified") == "true" {
				v += "+dirty"
			}
		}
	}
	return v + " " + bi.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}

func buildSetting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// printVersion prints the version line and the modules jrpc was built from.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "jrpc %s\n", version())
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	fmt.Fprintf(w, "  module  %s %s\n", bi.Main.Path, orDevel(bi.Main.Version))
	for _, d := range bi.Deps {
		if strings.HasPrefix(d.Path, "github.com/seedhq/jsonrpc") {
			v := orDevel(d.Version)
			if d.Replace != nil {
				v += " => " + d.Replace.Path + " " + d.Replace.Version
			}
			fmt.Fprintf(w, "  library %s %s\n", d.Path, strings.TrimSpace(v))
		}
	}
	fmt.Fprintf(w, "  go      %s %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	if t := buildSetting(bi, "vcs.time"); t != "" {
		fmt.Fprintf(w, "  commit  %s %s\n", buildSetting(bi, "vcs.revision"), t)
	}
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}
