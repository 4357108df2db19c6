// Command slim is the git-aware worktree guard and patch gateway for AI coding
// agents. This package only parses flags and wires commands to the library
// packages; every decision lives in those packages.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
