package format

import "github.com/slimgate/slim/internal/kinderr"

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: the options are wrong (no guard, a negative time bound).
	Usage Kind = "usage"
	// Validation: a configuration file is malformed (not JSONC, or a
	// formatter setting of the wrong type), or a file is over the size
	// slim reads.
	Validation Kind = "validation"
	// Verification: the file to format is missing or is not a regular file.
	Verification Kind = "verification"
	// Internal: a file could not be read, or the work was interrupted.
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines.
const (
	CodeUsage         = "usage"
	CodeConfigInvalid = "config_invalid"
	CodeTooLarge      = "file_too_large"
	CodeMissing       = "file_missing"
	CodeNotRegular    = "not_a_regular_file"
	CodeInternal      = "internal_unexpected"
)

// Error is every error the package returns. Message is complete: it says
// what happened and what to do next. A file outside the worktree is
// refused with the worktree package's *worktree.BlockedError instead,
// whose Verdict says why.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }
