package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slimgate/slim/internal/doctor"
	"github.com/urfave/cli/v2"
)

func init() { register(doctorCommand) }

func doctorCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "list the external programs slim can use (path, how it was found, version) and what is installed here",
		UsageText: "slim doctor [--json] [DIR]\n\n" +
			"Reports git, rg, ast-grep, node and opencode: where each was found (SLIM_RG and SLIM_AST_GREP\n" +
			"first, then PATH; rg also in OpenCode's bin directory; ast-grep also in the node_modules/.bin\n" +
			"directories the OpenCode plugin passes for DIR; sg only when it says it is ast-grep)\n" +
			"and the version it reports, or how to install it. Then the OpenCode plugin (project and global)\n" +
			"and the git hook shims for DIR (default: the working directory): current, outdated, absent or\n" +
			"foreign. Changes nothing; exits 0 whatever it finds.\n\n" +
			"Examples:\n" +
			"   slim doctor\n" +
			"   slim doctor --json ~/src/app",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print {slim, directory, programs, installs}"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageErr("doctor takes at most one directory")
			}
			dir := c.Args().First()
			if dir == "" {
				dir = "."
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return usageErr("doctor: %v", err)
			}
			if st, err := os.Stat(abs); err != nil || !st.IsDir() {
				return usageErr("doctor: %s is not a directory", dir)
			}
			v, _ := versionInfo()
			self, _ := os.Executable()
			r := doctor.Run(context.Background(), doctor.Options{
				Dir:         abs,
				PathList:    e.cfg.path,
				Rg:          e.cfg.rg,
				AstGrep:     e.cfg.astGrep,
				OpenCodeBin: e.cfg.openCodeBin,
				Getenv:      os.Getenv,
				SlimVersion: v,
				SlimPath:    self,
			})
			if jsonMode(c) {
				return e.writeJSON(r)
			}
			_, err = fmt.Fprintln(e.stdout, r.Text())
			return err
		},
	}
}
