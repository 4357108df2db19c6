package store

import (
	"fmt"

	"github.com/slimgate/slim/internal/kinderr"
)

// Kind classifies an Error by what the caller can do about it.
type Kind string

// The kinds of Error.
const (
	// Corrupt: the document cannot be used: it does not decode, breaks the
	// schema, is not a regular file (a symbolic link, a named pipe, a
	// directory) or is larger than the bound. It is left exactly as it was
	// for an operator to look at; nothing reads it as empty.
	Corrupt Kind = "corrupt"
	// Unsupported: the document has a schema version this build does not
	// know (a newer slim wrote it). It is left as it was.
	Unsupported Kind = "unsupported"
	// Busy: another process held the lock for longer than the wait allows.
	Busy Kind = "busy"
	// Unsafe: the scope directory or the lock file cannot be trusted (a
	// symbolic link, not a directory, another user's).
	Unsafe Kind = "unsafe"
	// Invalid: the caller passed bad options, or a transaction left a
	// state that breaks the schema or would be too large to read back;
	// nothing was written.
	Invalid Kind = "invalid"
	// Refused: a lease or journal helper refused a change that would break
	// the protocol (a lease already held, a stale token, a phase that may
	// not follow the current one). The state is unchanged.
	Refused Kind = "refused"
	// IO: the file system refused a read or a write.
	IO Kind = "io"
)

// Stable codes of an Error, for machines.
const (
	CodeCorrupt    = "store_corrupt"
	CodeNotRegular = "store_not_regular"
	CodeTooLarge   = "store_too_large"
	CodeVersion    = "store_version"
	CodeBusy       = "store_busy"
	CodeDirUnsafe  = "store_dir_unsafe"
	CodeLockUnsafe = "store_lock_unsafe"
	CodeBadOptions = "store_bad_options"
	CodeBadUpdate  = "store_bad_update"
	CodeIO         = "store_io"

	CodeLeaseHeld     = "lease_held"
	CodeLeaseStale    = "lease_stale"
	CodeLeaseNotOwner = "lease_not_owner"
	CodeBadLease      = "lease_bad_request"
	CodeOpExists      = "op_exists"
	CodeOpMissing     = "op_missing"
	CodeOpPhase       = "op_phase"
	CodeBadOp         = "op_bad_request"
)

// Error is every error the package returns (an Update passes fn's own
// error through unchanged). Message is complete and names the task store,
// so it can be shown as it is.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }

func newErr(k Kind, code string, cause error, format string, args ...any) *Error {
	msg := "task store: " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

func refused(code, format string, args ...any) *Error {
	return newErr(Refused, code, nil, format, args...)
}
