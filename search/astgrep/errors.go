package astgrep

import "github.com/slimgate/slim/search"

// Kind and Error are package search's: the structural search reports its
// failures in the same shape as grep and glob, with codes of its own.
type (
	Kind  = search.Kind
	Error = search.Error
)

// The kinds of Error, as package search defines them.
const (
	Usage        = search.Usage
	Validation   = search.Validation
	Verification = search.Verification
	Blocked      = search.Blocked
	Missing      = search.Missing
	Internal     = search.Internal
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

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}
