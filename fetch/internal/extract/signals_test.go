package extract

import (
	"strings"
	"testing"
)

// containsAnyFold finds the paywall phrases without lowering a copy of
// the page; it must agree with strings.ToLower and strings.Contains,
// including for the characters that lower to ASCII letters (U+0130 to
// "i", the Kelvin sign to "k") and those that do not.
func TestContainsAnyFoldAgreesWithToLower(t *testing.T) {
	for _, s := range []string{
		"",
		"p",
		"Please SUBSCRIBE TO CONTINUE reading",
		"subscribe to continu",
		"S\u0130gn in to continue", // İ lowers to i
		"sign\u00a0in to continue", // a no-break space is not a space
		"Members\tonly",
		"members only",
		"…premium content…",
		"premium c\u212Antent", // the Kelvin sign lowers to k, not o
		"PAYWAL",
		"naïve paywall",
		"\xffpaywall",
	} {
		want := containsAnyFoldByLowering(s, paywallPhrases)
		if got := containsAnyFold(s, paywallPhrases); got != want {
			t.Errorf("containsAnyFold(%q) = %v, want %v", s, got, want)
		}
	}
	if !containsAnyFold("A \u212Aey", []string{"key"}) {
		t.Error("a phrase does not start at a Kelvin sign (k)")
	}
	if !containsAnyFold("log \u0130n", []string{"in"}) {
		t.Error("a phrase does not start at U+0130 (i)")
	}
}

func containsAnyFoldByLowering(s string, phrases []string) bool {
	lower := strings.ToLower(s)
	for _, p := range phrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

func FuzzContainsAnyFold(f *testing.F) {
	f.Add("Subscribe To Continue", "subscribe to continue")
	f.Add("S\u0130GN", "sign")
	f.Add("\u212Aey", "key")
	f.Fuzz(func(t *testing.T, s, phrase string) {
		phrase = strings.ToLower(phrase)
		for i := 0; i < len(phrase); i++ {
			if phrase[i] >= 0x80 {
				t.Skip() // the phrases are ASCII
			}
		}
		if phrase == "" {
			t.Skip()
		}
		phrases := []string{"paywall", phrase, "members only"}
		if got, want := containsAnyFold(s, phrases), containsAnyFoldByLowering(s, phrases); got != want {
			t.Errorf("containsAnyFold(%q, %q) = %v, want %v", s, phrase, got, want)
		}
	})
}

// countFields counts like strings.Fields, whose definition of white space
// (unicode.IsSpace) includes characters outside ASCII.
func TestCountFieldsAgreesWithStringsFields(t *testing.T) {
	for _, s := range []string{
		"", " ", "a", " a b\tc\n", "a\vb\fc\rd",
		"a\u0085b", "a\u00a0b", "a\u2003b\u3000c", "naïve café", "\xff \xfe", "x\u200bx",
	} {
		if got, want := countFields(s), len(strings.Fields(s)); got != want {
			t.Errorf("countFields(%q) = %d, want %d", s, got, want)
		}
	}
}
