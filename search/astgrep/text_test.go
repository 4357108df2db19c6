package astgrep

import (
	"strings"
	"testing"
)

// The text output's widths: a match is cut to 100 characters, each side
// of a replacement pair to 60, line breaks shown as \n; a dry run says how
// to apply, an applied replace does not.
func TestFormatCutsMatchesAndPairsToTheirWidths(t *testing.T) {
	long := strings.Repeat("x", 150)
	res := &SearchResult{Total: 1, Files: 1, Matches: []Match{{File: "a.go", Line: 3, Text: "f(\n" + long + ")"}}}
	want := "Found 1 match in 1 file\n\na.go\n  3: f(\\n" + strings.Repeat("x", 96) + "...\n"
	if got := FormatSearch(res, Limits{}); got != want {
		t.Errorf("search:\n%q\nwant\n%q", got, want)
	}

	edit := Edit{Line: 2, Original: "old(" + long + ")", Replacement: "new(\n" + long + ")"}
	rr := &ReplaceResult{Total: 1, Files: []FileChange{{Path: "a.go", Edits: []Edit{edit}}}}
	pair := "  2: old(" + strings.Repeat("x", 56) + "... → new(\\n" + strings.Repeat("x", 54) + "...\n"
	dry := FormatReplace(rr, Limits{})
	if want := "[dry run] 1 replacement in 1 file\n\na.go\n" + pair + "\nNothing was written."; !strings.HasPrefix(dry, want) {
		t.Errorf("dry run:\n%q\nwant it to start\n%q", dry, want)
	}
	rr.Applied = true
	if got, want := FormatReplace(rr, Limits{}), "[applied] 1 replacement in 1 file\n\na.go\n"+pair; got != want {
		t.Errorf("applied:\n%q\nwant\n%q", got, want)
	}
}
