package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/search/astgrep"
	"github.com/urfave/cli/v2"
)

func init() { register(versionCommand) }

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print slim's version, commit, hook protocol version and Go version",
		UsageText: "slim version [--json]\n\nExample:\n   slim version --json",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {version, commit, protocol, go, features, languages, phases}"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("version takes no arguments")
			}
			version, commit := versionInfo()
			if jsonMode(c) {
				return e.writeJSON(struct {
					Version  string `json:"version"`
					Commit   string `json:"commit"`
					Protocol int    `json:"protocol"`
					Go       string `json:"go"`
					// Features are the tools this build can serve, so that
					// a plugin never offers one an older slim lacks.
					Features []string `json:"features"`
					// Languages are the values `slim search ast --lang`
					// takes, for the plugin's tool schemas.
					Languages []string `json:"languages"`
					// Phases are the hook phases `slim hook` can answer
					// with anything but a plain pass, per tool, so that the
					// plugin, which runs this once at load, runs slim only
					// for those. It comes from the dispatcher `slim hook`
					// builds, with the same environment.
					Phases protocol.Plan `json:"phases"`
					// Served are the commands the resident slim (slim
					// hook serve) runs for the plugin's tools, by name
					// ("fetch", "tasks status"): the plugin sends those
					// as run frames and starts a process for the others.
					Served []string `json:"served"`
				}{version, commit, protocol.Version, runtime.Version(), features(), astgrep.Languages, newDispatcher(e).Plan(), servedCommands})
			}
			_, err := fmt.Fprintf(e.stdout, "slim %s (commit %s, protocol %d, %s)\n", version, commit, protocol.Version, runtime.Version())
			return err
		},
	}
}

// versionInfo returns the version and commit slim reports. Release builds
// set both with the linker. A plain `go build` or `go install` leaves them
// at "dev" and "none"; then they come from the build information the go
// command records in the binary, when it has any.
func versionInfo() (string, string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version, commit
	}
	return fromBuildInfo(version, commit, info)
}

// fromBuildInfo fills in what the linker did not set: the main module's
// version (a release tag for `go install module@version`, a pseudo-version
// for a build inside a git checkout; "(devel)" says nothing) and the first
// 12 hex digits of the VCS revision, as in a pseudo-version.
func fromBuildInfo(v, c string, info *debug.BuildInfo) (string, string) {
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if c == "none" {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				c = s.Value
				if len(c) > 12 {
					c = c[:12]
				}
			}
		}
	}
	return v, c
}

// features are the capabilities `slim version --json` lists, so that the
// plugin uses only what this build has: "serve-sync" is the resident's
// synchronous channel (`slim hook serve --sync DIR`), where the system has
// FIFOs.
func features() []string {
	f := []string{"search", "fetch", "tasks", "apply", "serve"}
	if syncChannelSupported {
		f = append(f, "serve-sync")
	}
	return f
}
