package main

import "path/filepath"

// settings are the SLIM_* environment variables the commands act on, read
// once when slim starts. The library packages read none of them: each
// reaches them as an option. (The state directory, SLIM_STATE_DIR, is
// found by internal/statedir when a command asks for it.)
type settings struct {
	// allowNested is SLIM_ALLOW_NESTED=1: targets inside nested worktrees,
	// submodules and nested repositories count as inside.
	allowNested bool
	// outside is SLIM_OUTSIDE: "block" or "passthrough" for apply_patch
	// targets outside the workspace; "" means block.
	outside string
	// hookTimeout is SLIM_HOOK_TIMEOUT_MS as the plugin passes it on, unparsed
	// (patchBudget reads it the way the plugin does).
	hookTimeout string
	// logFile is SLIM_LOG_FILE and logLevel SLIM_LOG_LEVEL. The command
	// tree reads SLIM_LOG_LEVEL through its --log-level flag; the hook's
	// fast path, which builds no command tree, uses logLevel.
	logFile  string
	logLevel string
	// astGrep is SLIM_AST_GREP: the ast-grep binary to run for slim search
	// ast and replace ("" means look for one).
	astGrep string
	// path is PATH, where external programs (ast-grep, rg) are looked for.
	path string
	// rg is SLIM_RG: the ripgrep binary slim search grep and glob (and
	// slim doctor) use instead of looking for one.
	rg string
	// openCodeBin is the bin directory of OpenCode's data directory,
	// $XDG_DATA_HOME/opencode/bin or ~/.local/share/opencode/bin, where
	// OpenCode keeps the rg it downloads; slim only reads it. "" when
	// neither variable is set.
	openCodeBin string
}

// readSettings reads the settings from the environment.
func readSettings(getenv func(string) string) settings {
	return settings{
		allowNested: getenv("SLIM_ALLOW_NESTED") == "1",
		outside:     getenv("SLIM_OUTSIDE"),
		hookTimeout: getenv("SLIM_HOOK_TIMEOUT_MS"),
		logFile:     getenv("SLIM_LOG_FILE"),
		logLevel:    getenv("SLIM_LOG_LEVEL"),
		astGrep:     getenv("SLIM_AST_GREP"),
		path:        getenv("PATH"),
		rg:          getenv("SLIM_RG"),
		openCodeBin: openCodeBinDir(getenv),
	}
}

// openCodeBinDir is where OpenCode keeps the programs it downloads: the
// bin folder of its data directory under $XDG_DATA_HOME, else under
// ~/.local/share.
func openCodeBinDir(getenv func(string) string) string {
	base := getenv("XDG_DATA_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "opencode", "bin")
}
