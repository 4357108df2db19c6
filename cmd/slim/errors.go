package main

import (
	"errors"

	"github.com/slimgate/slim/hooks/install"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/search"
	"github.com/slimgate/slim/search/astgrep"
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
		return &slimerr.Error{Kind: rescueKind(re.Kind), Code: re.Code, Message: re.Message, Err: err}
	}
	var be *worktree.BlockedError
	if errors.As(err, &be) {
		kind := slimerr.Blocked
		if be.Verdict.Code == worktree.CodeInvalidPath {
			kind = slimerr.Validation
		}
		return &slimerr.Error{Kind: kind, Code: be.Verdict.Code, Message: be.Message, Err: err}
	}
	var ae *astgrep.Error
	if errors.As(err, &ae) {
		return &slimerr.Error{Kind: astgrepKind(ae.Kind), Code: ae.Code, Message: ae.Message, Err: err}
	}
	var sre *search.Error
	if errors.As(err, &sre) {
		return &slimerr.Error{Kind: searchKind(sre.Kind), Code: sre.Code, Message: sre.Message, Err: err}
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

// rescueKind is the CLI kind of a rescue error kind.
func rescueKind(k rescue.Kind) slimerr.Kind {
	switch k {
	case rescue.Usage:
		return slimerr.Usage
	case rescue.Validation:
		return slimerr.Validation
	case rescue.Verification:
		return slimerr.Verification
	case rescue.Blocked:
		return slimerr.Blocked
	}
	return slimerr.Internal
}

// searchKind is the CLI kind of a search error kind. A missing ripgrep is
// not the user's input error: it is internal (exit 1), and its message
// says how to install it.
func searchKind(k search.Kind) slimerr.Kind {
	switch k {
	case search.Usage:
		return slimerr.Usage
	case search.Validation:
		return slimerr.Validation
	case search.Verification:
		return slimerr.Verification
	case search.Blocked:
		return slimerr.Blocked
	}
	return slimerr.Internal
}
