package astgrep

import "testing"

// fileDiff on the edges of a file: a replace that empties the last line of
// a file without a final line break takes that line's preceding break
// along, and the hunk covers both lines (it used to index before the new
// file's start and panic).
func TestFileDiffAtTheEndOfAFileWithoutFinalBreak(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		spans    []span
		want     string
	}{
		{"last line removed", "\nbb", "", []span{{start: 1, end: 3}},
			"--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-\n-bb\n\\ No newline at end of file\n"},
		{"last line rewritten", "a\nbb", "a\ncc", []span{{start: 2, end: 4, repl: "cc"}},
			"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-bb\n\\ No newline at end of file\n+cc\n\\ No newline at end of file\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fileDiff("f", []byte(c.old), []byte(c.new), c.spans); got != c.want {
				t.Errorf("diff\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}
