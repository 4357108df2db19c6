package main

import (
	"errors"

	"github.com/slimgate/slim/fetch"
	"github.com/slimgate/slim/hooks/install"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/search"
	"github.com/slimgate/slim/tasks"
	"github.com/slimgate/slim/worktree"
)

// classify maps an error a command returns to the CLI's error shape, whose
// kind fixes the exit code. The library packages return their own typed
// errors; this is the one place that gives each a kind. A *slimerr.Error
// (made by a command itself) is taken as it is, and anything else is an
// internal error with its own text.
func classify(err error) *slimerr.Error {
	if err == nil {
		return nil
	}
	var se *slimerr.Error
	if errors.As(err, &se) {
		return se
	}
	var re *rescue.Error
	if errors.As(err, &re) {
		return &slimerr.Error{Kind: cliKind(re.Kind), Code: re.Code, Message: re.Message, Err: err}
	}
	var be *worktree.BlockedError
	if errors.As(err, &be) {
		kind := slimerr.Blocked
		if be.Verdict.Code == worktree.CodeInvalidPath {
			kind = slimerr.Validation
		}
		return &slimerr.Error{Kind: kind, Code: be.Verdict.Code, Message: be.Message, Err: err}
	}
	var sre *search.Error // search/astgrep reports through the same type
	if errors.As(err, &sre) {
		return &slimerr.Error{Kind: cliKind(sre.Kind), Code: sre.Code, Message: sre.Message, Err: err}
	}
	var fe *fetch.Error
	if errors.As(err, &fe) {
		return &slimerr.Error{Kind: cliKind(fe.Kind), Code: fe.Code, Message: fe.Message, Err: err}
	}
	if te, ok := tasks.AsError(err); ok {
		kind := slimerr.Internal // a tool's refusal, or slim's own failure: exit 1
		switch te.Kind {
		case tasks.Usage:
			kind = slimerr.Usage
		case tasks.Store:
			kind = slimerr.Validation // exit 3: the store cannot be used
		}
		return &slimerr.Error{Kind: kind, Code: te.Code, Message: te.Message, Err: err}
	}
	var ie *install.Error
	if errors.As(err, &ie) {
		kind := slimerr.Blocked // a file or link slim will not touch
		if ie.Code == install.CodeNotRepository {
			kind = slimerr.Usage
		}
		return &slimerr.Error{Kind: kind, Code: ie.Code, Message: ie.Message, Err: err}
	}
	return &slimerr.Error{Kind: slimerr.Internal, Code: slimerr.CodeInternal, Message: err.Error(), Err: err}
}

// cliKind is the CLI kind of a library error kind. The libraries spell the
// kinds they share with the CLI the same way (usage, validation,
// verification, blocked; TestLibraryKindsMapToExitCodes pins it); any other
// kind (internal, or a missing external program, which is a fault of the
// machine and not of the input) is internal, exit 1, and its message says
// how to install what is missing.
func cliKind[K ~string](k K) slimerr.Kind {
	switch kk := slimerr.Kind(k); kk {
	case slimerr.Usage, slimerr.Validation, slimerr.Verification, slimerr.Blocked:
		return kk
	}
	return slimerr.Internal
}
