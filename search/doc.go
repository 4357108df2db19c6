// Package search is slim's text search, as OpenCode's grep and glob tools
// search, with the guards the host leaves out.
//
//   - Precheck decides a host's grep or glob call before the host runs it
//     (`slim hook before`): a stale absolute path is re-anchored on the
//     workspace, a missing path is refused.
//   - ResolveTarget does the same for slim's own commands and adds
//     containment: the path must lie inside the workspace a
//     worktree.Guard describes.
//   - Grep and Glob run ripgrep (found by FindRipgrep: an explicit binary,
//     PATH, OpenCode's downloaded copy) with an argument vector, its output
//     streamed through a bound and its process group killed at the time
//     limit, and lay the results out as OpenCode does (GrepResult.Text,
//     GlobResult.Text): the most recently modified files first, at most a
//     limit shown, all counted. Without a ripgrep they run a built-in
//     fallback that follows ripgrep's defaults (ignore files, hidden files,
//     binary detection, glob semantics) and says that it is one.
//
// Errors are *Error, whose Kind tells the caller what to do. The package
// reads no environment variable: the caller passes PATH, the binary and
// the directories. Structural search and replace live in search/astgrep.
package search
