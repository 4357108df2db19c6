// Package kinderr is the error shape slim's library packages return: a
// kind the caller acts on, a stable code for machines, a complete message
// (what happened and what to do next) and the cause.
//
// Each package instantiates it with its own kind type and names the
// result (type Error = kinderr.Error[Kind]), so errors.As still tells one
// package's errors from another's, and each package documents its kinds
// and codes beside its own type.
package kinderr

import "errors"

// Error is one package's error. Message is what Error returns: it is
// complete, so a caller can show it as it is.
type Error[K ~string] struct {
	Kind    K
	Code    string
	Message string
	// Err is the cause, for errors.Is and errors.As; it is not printed
	// beyond what Message says.
	Err error
}

func (e *Error[K]) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error[K]) Unwrap() error { return e.Err }

// As returns the *Error[K] in err's chain, if any.
func As[K ~string](err error) (*Error[K], bool) {
	var e *Error[K]
	ok := errors.As(err, &e)
	return e, ok
}
