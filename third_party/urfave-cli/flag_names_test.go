package cli

import (
	"regexp"
	"testing"
)

// stripCommaWhitespace must do what the regular expression it replaces did.
func FuzzStripCommaWhitespace(f *testing.F) {
	re := regexp.MustCompile("[, ]+.*")
	for _, s := range []string{"", "name", "name, n", "a b", ",", " x", "a,b\nc d\n", "a\n, b", "x\r, y", "é ü,", "a ,\n\n ,b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := stripCommaWhitespace(s), re.ReplaceAllString(s, ""); got != want {
			t.Fatalf("stripCommaWhitespace(%q) = %q, the expression gives %q", s, got, want)
		}
	})
}
