package rescue

import (
	"errors"

	"github.com/slimgate/slim/internal/kinderr"
	"github.com/slimgate/slim/rescue/internal/match"
	"github.com/slimgate/slim/rescue/internal/patch"
	"github.com/slimgate/slim/worktree"
)

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Usage: the Options are wrong (an unknown outside policy).
	Usage Kind = "usage"
	// Validation: the patch is malformed or over a limit, or names a path
	// no file system holds; no file was read.
	Validation Kind = "validation"
	// Verification: the patch is well formed but does not fit the files (a
	// chunk not found or ambiguous, a file missing, binary, changed since
	// it was read, or one the host could not write as intended).
	Verification Kind = "verification"
	// Blocked: a guard refused a target (outside the area, the git dir, a
	// nested worktree, a directory that changed after the check, a check
	// that ran out of time).
	Blocked Kind = "blocked"
	// Internal: a read or write failed, or the work was interrupted; every
	// file was restored unless the message says otherwise.
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines (the "code" of --json).
const (
	CodeMalformedPatch     = "malformed_patch"
	CodeVerificationFailed = "verification_failed"
	CodeOutsideWorkspace   = worktree.CodeOutside
	CodeNestedWorktree     = worktree.CodeNested
	CodeGitDir             = worktree.CodeGitDir
	CodeInvalidPath        = worktree.CodeInvalidPath
	// CodePathChanged: a directory or file on the way changed between the
	// containment check and the read or write.
	CodePathChanged = "path_changed"
	// CodeTooLarge: the patch or a target is above its size limit.
	CodeTooLarge = "too_large"
	// CodeBudget: the check did not finish within Options.Context's
	// deadline.
	CodeBudget   = "budget_exceeded"
	CodeInternal = "internal_unexpected"
	CodeUsage    = "usage"
)

// Error is every error Process returns. Message is complete: it starts
// with the prefix models key on ("apply_patch validation failed: ",
// "apply_patch verification failed: ", "apply_patch blocked: ",
// "apply_patch internal error: ").
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

// asError turns whatever the engine's parts returned into an *Error: the
// parser's, the matcher's and the guard's own errors get their kind, and
// anything else is internal.
func asError(err error) *Error {
	if err == nil {
		return nil
	}
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	var se *patch.SyntaxError
	if errors.As(err, &se) {
		return &Error{Kind: Validation, Code: CodeMalformedPatch, Message: se.Message, Err: err}
	}
	var me *match.Error
	if errors.As(err, &me) {
		return &Error{Kind: Verification, Code: CodeVerificationFailed, Message: me.Message, Err: err}
	}
	var be *worktree.BlockedError
	if errors.As(err, &be) {
		kind := Blocked
		if be.Verdict.Code == worktree.CodeInvalidPath {
			kind = Validation
		}
		return &Error{Kind: kind, Code: be.Verdict.Code, Message: be.Message, Err: err}
	}
	return &Error{Kind: Internal, Code: CodeInternal, Message: internalPrefix + err.Error(), Err: err}
}

// message is the text of any error the engine's parts return.
func message(err error) string { return asError(err).Message }
