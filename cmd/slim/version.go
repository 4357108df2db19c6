package main

import (
	"fmt"
	"runtime"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/urfave/cli/v2"
)

func init() { register(versionCommand) }

func versionCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "version",
		Usage:     "print slim's version, commit, hook protocol version and Go version",
		UsageText: "slim version [--json]\n\nExample:\n   slim version --json",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {version, commit, protocol, go}"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("version takes no arguments")
			}
			if jsonMode(c) {
				return e.writeJSON(struct {
					Version  string `json:"version"`
					Commit   string `json:"commit"`
					Protocol int    `json:"protocol"`
					Go       string `json:"go"`
				}{version, commit, protocol.Version, runtime.Version()})
			}
			_, err := fmt.Fprintf(e.stdout, "slim %s (commit %s, protocol %d, %s)\n", version, commit, protocol.Version, runtime.Version())
			return err
		},
	}
}
