// Package owner names a process well enough that another process can later
// tell whether it is still running.
//
// A pid alone cannot do that: once a process exits, the kernel hands its
// number to the next process that starts, and after a reboot numbering
// starts over. An Identity therefore also carries the process's start time
// and the boot it started in. A process is alive only when its pid exists,
// it has the recorded start time and the machine has not rebooted since.
// Anything that cannot be checked (another host, a platform without a
// process table to read, an identity recorded without a start time) is
// reported as unknown, never as dead, so a caller that releases what a dead
// process held never releases what a live one still holds.
package owner

import (
	"fmt"
	"os"

	"github.com/slimgate/slim/internal/kinderr"
)

// Identity names one run of one process. It is stored with what the process
// holds (a lease, a pending remote write), so the JSON field names are
// stable.
type Identity struct {
	// PID is the process id.
	PID int `json:"pid"`
	// StartTime is when the process started, in the kernel's clock ticks
	// since boot (field 22 of /proc/<pid>/stat on Linux). 0 means unknown.
	StartTime uint64 `json:"startTime"`
	// BootID names the boot the process started in
	// (/proc/sys/kernel/random/boot_id on Linux). Empty means unknown.
	BootID string `json:"bootID"`
	// Host is the machine's host name. Liveness is decided only on the
	// same host.
	Host string `json:"host"`
}

// Same reports whether id and other name the same run of the same process.
func (id Identity) Same(other Identity) bool { return id == other }

// String formats id for messages: pid 123 started 456 on host (boot 1a2b…).
func (id Identity) String() string {
	boot := id.BootID
	if len(boot) > 8 {
		boot = boot[:8] + "…"
	}
	return fmt.Sprintf("pid %d started %d on %s (boot %s)", id.PID, id.StartTime, id.Host, boot)
}

// Kind classifies an Error.
type Kind string

// The kinds of Error. Both mean "cannot tell": a caller must treat the
// process as possibly alive.
const (
	// Unknown: liveness cannot be decided here (another host, no process
	// table, an incomplete identity, an unreadable process entry).
	Unknown Kind = "unknown"
	// Invalid: the identity names no process at all (pid 0 or negative).
	Invalid Kind = "invalid"
)

// Stable codes of an Error, for machines.
const (
	CodeOtherHost   = "owner_other_host"
	CodeIncomplete  = "owner_incomplete"
	CodeUnsupported = "owner_unsupported"
	CodeUnreadable  = "owner_unreadable"
	CodeBadPID      = "owner_bad_pid"
	CodeGone        = "owner_gone" // Of: the process does not exist
)

// Error is every error the package returns. Message is complete and names
// the process it is about.
//
// Its fields are Kind, Code (a stable code from the list above), Message
// and Err, the cause.
type Error = kinderr.Error[Kind]

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }

func newErr(k Kind, code string, cause error, format string, args ...any) *Error {
	msg := "process liveness: " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Kind: k, Code: code, Message: msg, Err: cause}
}

// Self returns the identity of the calling process. Parts that cannot be
// read are left empty, which makes a later Alive answer unknown rather
// than wrong.
func Self() Identity { return system().self() }

// Of returns the identity of the running process pid, for a parent that
// records a child it started. It fails when the process does not exist or
// its entry cannot be read.
func Of(pid int) (Identity, error) { return system().of(pid) }

// Alive reports whether the process id names is still running: (true, nil)
// when it is, (false, nil) when it is proven gone (no such pid, another
// start time, a zombie, or a reboot since), and (false, *Error) when that
// cannot be decided here. A caller must never treat an error as "dead".
func Alive(id Identity) (bool, error) { return system().alive(id) }

// hostname is os.Hostname with failures as "" (an unknown host).
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}
