package rescue

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// referenceSplit is the plain split of a text into lines and terminators
// (LF, CRLF, lone CR), with the dominant terminator (ties to the first
// seen): parseText must agree with it on every text.
func referenceSplit(s string) (lines, terms []string, eol string, noFinal bool) {
	counts := map[string]int{}
	var first []string
	for len(s) > 0 {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			lines, terms, noFinal = append(lines, s), append(terms, ""), true
			break
		}
		term := s[i : i+1]
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			term = "\r\n"
		}
		lines, terms = append(lines, s[:i]), append(terms, term)
		if counts[term] == 0 {
			first = append(first, term)
		}
		counts[term]++
		s = s[i+len(term):]
	}
	eol, best := "\n", 0
	for _, t := range first {
		if counts[t] > best {
			best, eol = counts[t], t
		}
	}
	return
}

func TestParseTextMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	parts := []string{"a", "bc", "\n", "\r", "\r\n", " ", "\u201c"}
	for iter := 0; iter < 20000; iter++ {
		var b strings.Builder
		for k := r.IntN(10); k > 0; k-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		s := b.String()
		got, err := parseText([]byte(s))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		lines, terms, eol, noFinal := referenceSplit(s)
		if len(got.lines) != len(lines) || (len(lines) > 0 && (!reflect.DeepEqual(got.lines, lines) || !reflect.DeepEqual(termStrings(got.terms), terms))) ||
			got.eol.String() != eol || got.noFinal != noFinal {
			t.Fatalf("%q: got %q %q eol %q noFinal %v; want %q %q eol %q noFinal %v", s, got.lines, got.terms, got.eol, got.noFinal, lines, terms, eol, noFinal)
		}
	}
}

func termStrings(ts []eol) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.String()
	}
	return out
}
