package main

import (
	"fmt"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/internal/statedir"
	"github.com/urfave/cli/v2"
)

func init() { register(loopCommand) }

func loopCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "loop",
		Usage:     "inspect or reset the repeated tool call guard",
		UsageText: "slim loop reset --session ID\n\nExample:\n   slim loop reset --session ses_4f2a",
		Subcommands: []*cli.Command{{
			Name:  "reset",
			Usage: "forget one session's loop guard state (what session.deleted does)",
			UsageText: "slim loop reset --session ID [--json]\n\n" +
				"Deletes the session's state file, so counting starts again and a refused call may run.\n\n" +
				"Example:\n   slim loop reset --session ses_4f2a",
			Flags: []cli.Flag{
				// Checked in the action, not with Required: urfave/cli reports a
				// missing required flag as an untyped error.
				&cli.StringFlag{Name: "session", Usage: "the host's session ID (required)"},
				&cli.BoolFlag{Name: "json", Usage: "print {session, file, removed}"},
			},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageErr("loop reset takes no arguments (got %q)", c.Args().First())
				}
				if !c.IsSet("session") {
					return usageErr(`Required flag "session" not set`)
				}
				sid := c.String("session")
				if sid == "" {
					return usageErr("loop reset: --session must not be empty")
				}
				root, err := statedir.Root()
				if err != nil {
					return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
				}
				store := loopguard.NewStore(root, loopguard.StoreOptions{Log: e.log})
				removed, err := store.Delete(sid)
				if err != nil {
					return slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, err)
				}
				if jsonMode(c) {
					return e.writeJSON(struct {
						Session string `json:"session"`
						File    string `json:"file"`
						Removed bool   `json:"removed"`
					}{sid, store.Path(sid), removed})
				}
				if removed {
					_, err = fmt.Fprintf(e.stdout, "loop guard state of session %s removed\n", sid)
				} else {
					_, err = fmt.Fprintf(e.stdout, "session %s had no loop guard state\n", sid)
				}
				return err
			},
		}},
	}
}
