// Package astgrep drives the ast-grep binary for structural code search
// (Search) and a contained, all-or-nothing structural replace (Replace).
//
// ast-grep has no Go equivalent worth embedding (its pattern, metavariable
// and rewrite engine sit on tree-sitter grammars that need cgo), so the
// package runs the binary: found by Locate, started with an argument vector
// (never a shell), its working directory set to the project directory,
// stdin closed, its output bounded (Limits), and its whole process group
// killed when the time runs out.
//
// Replace never lets ast-grep write. It asks for the rewrites as JSON,
// checks every path, glob root and reported file against the worktree
// guard, builds each file's new text itself from the reported byte ranges
// (keeping the file's line endings, final newline and byte order mark), and
// writes every file or none through the same transactional writer as
// `slim rescue --apply`.
//
// The package reads no environment variable: the caller passes the
// explicit binary, the PATH to search and the node_modules/.bin directories
// to look in.
package astgrep
