package ochost

import "github.com/slimgate/slim/internal/kinderr"

// Kind classifies an Error by where a benchmark run broke.
type Kind string

// The kinds of Error.
const (
	// Setup: the project could not be made (a directory, a file, git, or
	// `slim hooks install`).
	Setup Kind = "setup"
	// Host: `opencode run` failed, timed out, or the fake provider could not
	// start or stop.
	Host Kind = "host"
	// Output: the host's JSON events are not what a benchmark can time (a
	// tool part without times, an unreadable event stream).
	Output Kind = "output"
)

// Stable codes of an Error, for machines.
const (
	CodeSetup      = "setup_failed"
	CodeInstall    = "install_failed"
	CodeProvider   = "provider_failed"
	CodeRun        = "run_failed"
	CodeTimeout    = "run_timeout"
	CodeEvents     = "events_unreadable"
	CodePartNoTime = "part_without_time"
)

// Error is every error the package returns. Message is complete: it says
// what failed, and where the run's artifacts are when they were kept.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

func newErr(k Kind, code, msg string, cause error) *Error {
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }
