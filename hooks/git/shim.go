// Package git carries the git hook shim (shim.sh): the small POSIX shell
// script `slim hooks install --git` writes as pre-commit and pre-applypatch.
// The shim runs a hook that was there before slim, then `slim git-hook`, and
// refuses the commit only when slim reports findings (exit 5).
package git

import (
	_ "embed"
	"strings"
)

//go:embed shim.sh
var shimTemplate string

// Marker starts the second line of every shim slim writes; the installer
// recognises its own shims (any version) by it.
const Marker = "# slim-managed: "

// ChainSuffix is appended to an existing hook's name when it is moved aside.
const ChainSuffix = ".pre-slim"

// Shim returns the shim script for the git hook name.
func Shim(name string) []byte {
	return []byte(strings.ReplaceAll(shimTemplate, "@HOOK@", name))
}
