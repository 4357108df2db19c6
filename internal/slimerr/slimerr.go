// Package slimerr is the one error shape every slim command reports: a kind
// that fixes the exit code, a stable machine code, and the full message the
// user or the model reads. Only cmd/slim uses it: the library packages
// return their own typed errors, which cmd/slim maps to an *Error (and so
// to an exit code and, under --json, to {"error": {"kind", "code",
// "message"}}).
package slimerr

import (
	"errors"
	"fmt"
)

// Kind classifies a failure. Each kind has exactly one exit code.
type Kind string

// The kinds, with their exit codes in the comments. Every command uses the
// same codes (the README lists them); slim hook alone exits 0 for each of
// its decisions.
const (
	Internal     Kind = "internal"     // exit 1
	Usage        Kind = "usage"        // exit 2
	Validation   Kind = "validation"   // exit 3: malformed input
	Verification Kind = "verification" // exit 4: no match, ambiguous, missing file
	Blocked      Kind = "blocked"      // exit 5: outside the root or refused by a guard
)

// Stable machine codes carried in the JSON error object.
const (
	CodeMalformedPatch     = "malformed_patch"
	CodeVerificationFailed = "verification_failed"
	CodeInternal           = "internal_unexpected"
	CodeOutsideWorkspace   = "outside_workspace"
	CodeGitDir             = "git_dir"
	CodeUsage              = "usage"
)

// ExitCode returns the process exit code for k.
func (k Kind) ExitCode() int {
	switch k {
	case Usage:
		return 2
	case Validation:
		return 3
	case Verification:
		return 4
	case Blocked:
		return 5
	default:
		return 1
	}
}

// Error is a classified failure. Message is complete: it already carries any
// prefix (for example "apply_patch blocked: ") that models key on.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Err     error // optional cause, for errors.Is/As and logs; not printed
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error of kind k with code and a formatted message.
func New(k Kind, code, format string, args ...any) *Error {
	return &Error{Kind: k, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap classifies err as kind k with the given code, keeping err's text as
// the message. A nil err gives nil.
func Wrap(k Kind, code string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Code: code, Message: err.Error(), Err: err}
}

// From finds the *Error in err's chain. An error that carries none is
// reported as internal, with its own text as the message.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Code: CodeInternal, Message: err.Error(), Err: err}
}

// JSON is the wire form of an error: {"kind", "code", "message"}.
type JSON struct {
	Kind    Kind   `json:"kind"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ToJSON returns the wire form of err (nil for nil).
func ToJSON(err error) *JSON {
	e := From(err)
	if e == nil {
		return nil
	}
	code := e.Code
	if code == "" {
		switch e.Kind {
		case Usage:
			code = CodeUsage
		case Validation:
			code = CodeMalformedPatch
		case Verification:
			code = CodeVerificationFailed
		case Blocked:
			code = CodeOutsideWorkspace
		default:
			code = CodeInternal
		}
	}
	return &JSON{Kind: e.Kind, Code: code, Message: e.Message}
}
