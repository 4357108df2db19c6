package astgrep

import "errors"

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: the options are wrong (no pattern, an unknown language, a
	// negative context).
	Usage Kind = "usage"
	// Validation: ast-grep refused the query (a pattern it cannot parse, a
	// bad glob), or an answer is over a limit.
	Validation Kind = "validation"
	// Verification: the query fits no files as they are: a search path
	// that does not exist, a file that changed between ast-grep's read and
	// slim's, or a rewrite too large to check at once.
	Verification Kind = "verification"
	// Blocked: the worktree guard refused a path, a glob root or a file
	// ast-grep reported; nothing was written.
	Blocked Kind = "blocked"
	// Missing: no ast-grep binary was found.
	Missing Kind = "missing"
	// Internal: ast-grep could not be run, a read or write failed, or the
	// work was interrupted; every file was restored unless the message
	// says otherwise.
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines.
const (
	CodeUsage        = "usage"
	CodeNotInstalled = "ast_grep_not_installed"
	CodeToolError    = "ast_grep_error"
	CodePathNotFound = "path_not_found"
	CodeOutside      = "outside_workspace"
	CodeNested       = "nested_worktree"
	CodeGitDir       = "git_dir"
	CodeInvalidPath  = "invalid_path"
	CodePathChanged  = "path_changed"
	CodeFileChanged  = "file_changed"
	CodeTooLarge     = "too_large"
	CodeNotApproved  = "not_approved"
	CodeInterrupted  = "interrupted"
	CodeInternal     = "internal_unexpected"
)

// Error is every error Search, Replace and Locate return. Message is
// complete and names the tool it comes from.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// asError reports whether err carries an *Error.
func asError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
