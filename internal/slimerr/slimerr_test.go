package slimerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		kind Kind
		exit int
		code string
	}{
		{Internal, 1, CodeInternal},
		{Usage, 2, CodeUsage},
		{Validation, 3, CodeMalformedPatch},
		{Verification, 4, CodeVerificationFailed},
		{Blocked, 5, CodeOutsideWorkspace},
		{Kind("bogus"), 1, CodeInternal},
	} {
		if got := tc.kind.ExitCode(); got != tc.exit {
			t.Errorf("%s.ExitCode() = %d, want %d", tc.kind, got, tc.exit)
		}
		j := ToJSON(&Error{Kind: tc.kind, Message: "m"})
		if j.Code != tc.code || j.Message != "m" {
			t.Errorf("ToJSON(%s) = %+v, want code %s", tc.kind, j, tc.code)
		}
	}
}

func TestFromFindsWrappedErrors(t *testing.T) {
	base := New(Blocked, CodeGitDir, "apply_patch blocked: %s", "x")
	wrapped := fmt.Errorf("context: %w", base)
	if got := From(wrapped); got != base {
		t.Fatalf("From(wrapped) = %v, want the original *Error", got)
	}
	plain := errors.New("disk on fire")
	got := From(plain)
	if got.Kind != Internal || got.Message != "disk on fire" || !errors.Is(got, plain) {
		t.Fatalf("From(plain) = %+v", got)
	}
	if From(nil) != nil || ToJSON(nil) != nil || Wrap(Usage, CodeUsage, nil) != nil {
		t.Fatal("nil must stay nil")
	}
	w := Wrap(Verification, CodeVerificationFailed, plain)
	if From(w).Kind != Verification || !errors.Is(w, plain) {
		t.Fatalf("Wrap lost kind or cause: %+v", w)
	}
}
