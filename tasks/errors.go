package tasks

import (
	"fmt"

	"github.com/slimgate/slim/internal/kinderr"
)

// Kind classifies an Error by how the command ends.
type Kind string

// The kinds of Error. cmd/slim maps each to one exit code.
const (
	// Tool: the tool call failed with a message for the model (exit 1).
	// The message is the complete answer, in the wording the model knows.
	Tool Kind = "tool"
	// Usage: the request or the configuration is wrong (exit 2).
	Usage Kind = "usage"
	// Store: the durable state cannot be used (unreadable, corrupt, a
	// newer schema, an unsafe directory, a peer holding the lock too
	// long). Nothing was sent to the host (exit 3).
	Store Kind = "store"
	// Internal: slim itself failed (exit 1).
	Internal Kind = "internal"
)

// Stable codes of an Error, for machines.
const (
	CodeTool     = "task_tool_error"
	CodeUsage    = "task_usage"
	CodeStore    = "store_unreadable"
	CodeInternal = "task_internal"
)

// Error is every error the package returns. Message is complete.
type Error = kinderr.Error[Kind]

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) { return kinderr.As[Kind](err) }

func toolErr(format string, args ...any) *Error {
	return &Error{Kind: Tool, Code: CodeTool, Message: fmt.Sprintf(format, args...)}
}

func usageErr(format string, args ...any) *Error {
	return &Error{Kind: Usage, Code: CodeUsage, Message: fmt.Sprintf(format, args...)}
}

// storeErr wraps a failure of the durable store: the tool fails closed.
func storeErr(err error) *Error {
	return &Error{Kind: Store, Code: CodeStore, Message: "store unreadable: " + err.Error(), Err: err}
}

func internalErr(err error, format string, args ...any) *Error {
	return &Error{Kind: Internal, Code: CodeInternal, Message: fmt.Sprintf(format, args...) + ": " + err.Error(), Err: err}
}
