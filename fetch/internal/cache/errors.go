package cache

import (
	"errors"
	"fmt"

	"github.com/slimgate/slim/internal/kinderr"
)

// Kind classifies an Error by what the caller can do about it. The cache is
// best-effort: a caller normally ignores write errors and treats read
// errors as misses, and uses Kind only to decide what to log.
type Kind string

// The kinds of Error.
const (
	// Unsafe: the cache directory, or one below it, cannot be trusted (a
	// symbolic link, not a directory, another user's, writable by others).
	Unsafe Kind = "unsafe"
	// Invalid: the caller passed something the cache cannot store (a key
	// that is not a Key, a payload that is not JSON, bad options) or an
	// entry larger than the limits allow.
	Invalid Kind = "invalid"
	// Corrupt: a cache file could not be decoded, had another format
	// version, or held another key. It has been removed.
	Corrupt Kind = "corrupt"
	// NotFound: the entry to update does not exist (or no longer does).
	NotFound Kind = "not_found"
	// Busy: another process is sweeping the cache; the sweep was skipped.
	Busy Kind = "busy"
	// IO: the file system refused a read or a write.
	IO Kind = "io"
)

// Stable codes of an Error, for machines.
const (
	CodeDirUnsafe  = "cache_dir_unsafe"
	CodeBadOptions = "cache_bad_options"
	CodeBadKey     = "cache_bad_key"
	CodeBadEntry   = "cache_bad_entry"
	CodeTooLarge   = "cache_entry_too_large"
	CodeCorrupt    = "cache_entry_corrupt"
	CodeMissing    = "cache_entry_missing"
	CodeSweepBusy  = "cache_sweep_busy"
	CodeIO         = "cache_io"
)

// Error is every error the package returns. Message is complete and names
// the fetch cache, so it can be logged as it is.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }

func newErr(k Kind, code string, cause error, format string, args ...any) *Error {
	msg := "fetch cache: " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

func ioErr(cause error, format string, args ...any) *Error {
	return newErr(IO, CodeIO, cause, format, args...)
}

func corrupt(path string, cause error) *Error {
	return newErr(Corrupt, CodeCorrupt, cause, "%s was unreadable and has been removed", path)
}

// errTooLarge is the cause when a file, or its decompressed content, is over
// the entry bound.
var errTooLarge = errors.New("over the size limit")
