package main

import (
	"sort"

	"github.com/urfave/cli/v2"
)

func init() { register(searchCommand) }

// searchSubcommands builds the subcommands of `slim search`. Each
// search_*.go file adds its own in an init function, so the grep/glob and
// the ast-grep drivers live in separate files.
var searchSubcommands []func(*env) *cli.Command

func registerSearch(b func(*env) *cli.Command) { searchSubcommands = append(searchSubcommands, b) }

func searchCommand(e *env) *cli.Command {
	cmd := &cli.Command{
		Name:      "search",
		Usage:     "code search inside the worktree: grep and glob through ripgrep, structural search and replace through ast-grep",
		UsageText: "slim search grep|glob|ast|replace [flags] ...",
	}
	for _, b := range searchSubcommands {
		sub := b(e)
		setUsageErrors(sub)
		cmd.Subcommands = append(cmd.Subcommands, sub)
	}
	sort.Slice(cmd.Subcommands, func(i, j int) bool { return cmd.Subcommands[i].Name < cmd.Subcommands[j].Name })
	return cmd
}
