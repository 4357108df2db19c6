// Package format runs, after slim's own writes, the formatters OpenCode
// would have run after its own: the host formats a file after its write,
// edit and apply_patch tools change it, so a file slim writes in the
// host's place (apply mode, a hand-run `slim rescue --apply`, another
// host's after-edit hook) is formatted the same way only if slim does it.
//
// The host's behaviour is data here. Builtins is its formatter table
// (name, argument vector with $FILE, extensions, environment, and the
// detection Rule: a program on PATH, a config file or a package.json
// dependency found walking up from the session directory to the worktree
// top, an experimental switch, a probe run), copied from the release that
// HostVersion names. LoadConfig reads the `formatter` key of the host's
// opencode.json and opencode.jsonc files (JSON with comments and trailing
// commas), the user's and the project's, with the host's precedence:
// formatting is off unless a file sets it to true or to an object, whose
// entries disable a formatter (disabled: true), override a built-in's
// extensions, environment or command, or add a formatter of the project's
// own.
//
// A Host holds one session's table. Explain says which formatters apply
// to a file and why each other one does not; Run runs them, each bounded
// in time with its process group killed at the bound, and reports what
// changed: the bytes before and after, and whether the line endings
// flipped (it reports, and never undoes). Neither touches a file outside
// the session's worktree: the worktree package's containment decides.
//
// Where slim departs from the host, it says so: it never downloads an npm
// formatter (the host installs prettier or biome into its package cache on
// first use; slim runs the cached copy, else the project's
// node_modules/.bin, else PATH), it bounds each formatter in time, and it
// reads no remote or account configuration.
package format
