package main

import (
	"testing"

	"github.com/slimgate/slim/internal/slimerr"
	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/search"
)

// Every library's error kinds reach the documented exit codes: usage 2,
// validation 3, verification 4, blocked 5, and internal or a missing
// program 1.
func TestLibraryKindsMapToExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  slimerr.Kind
		exit int
	}{
		{"rescue usage", cliKind(rescue.Usage), 2},
		{"rescue validation", cliKind(rescue.Validation), 3},
		{"rescue verification", cliKind(rescue.Verification), 4},
		{"rescue blocked", cliKind(rescue.Blocked), 5},
		{"rescue internal", cliKind(rescue.Internal), 1},
		{"search usage", cliKind(search.Usage), 2},
		{"search validation", cliKind(search.Validation), 3},
		{"search verification", cliKind(search.Verification), 4},
		{"search blocked", cliKind(search.Blocked), 5},
		{"search missing rg", cliKind(search.Missing), 1},
		{"search internal", cliKind(search.Internal), 1},
	} {
		if code := tc.got.ExitCode(); code != tc.exit {
			t.Errorf("%s: exit %d, want %d", tc.name, code, tc.exit)
		}
	}
}
