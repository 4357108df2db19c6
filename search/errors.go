package search

import "github.com/slimgate/slim/internal/kinderr"

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: the options are wrong (no pattern, a negative limit, an
	// unknown language).
	Usage Kind = "usage"
	// Validation: the pattern or a glob does not compile (or ast-grep
	// refused the query), or an answer is over a limit.
	Validation Kind = "validation"
	// Verification: the search path does not exist, has a file where a
	// directory must be, or is not a directory where one is needed.
	Verification Kind = "verification"
	// Blocked: the search path lies outside the workspace or inside the
	// git directory.
	Blocked Kind = "blocked"
	// Missing: the external program (ripgrep, ast-grep) was not found
	// where one was required.
	Missing Kind = "missing"
	// Internal: the external program failed in a way that is not about
	// the query, a file could not be read or written, or the work was
	// interrupted.
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines.
const (
	CodeUsage          = "usage"
	CodeBadPattern     = "bad_pattern"
	CodeBadGlob        = "bad_glob"
	CodePathMissing    = "search_path_missing"
	CodePathInvalid    = "search_path_invalid"
	CodeNotDirectory   = "not_a_directory"
	CodeNotSearchable  = "not_searchable"
	CodeOutside        = "outside_workspace"
	CodeGitDir         = "git_dir"
	CodeInvalidPath    = "invalid_path"
	CodeRgNotInstalled = "rg_not_installed"
	CodeRgUnusable     = "rg_unusable"
	CodeRgFailed       = "rg_failed"
	CodeInternal       = "internal_unexpected"
)

// Error is every error the package (and search/astgrep) returns. Message is complete: it says
// what happened and what to do next, and names the tool it comes from.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }
