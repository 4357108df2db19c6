package textutils

// This file is added by slim's third_party/vendor-html-to-markdown.sh
// patch: TrimConsecutiveNewlines works byte by byte instead of rune by
// rune, and must give what the released version gives for any input.

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// trimConsecutiveNewlinesReleased is TrimConsecutiveNewlines as released.
func trimConsecutiveNewlinesReleased(input []byte) []byte {
	var result []byte
	newlineCount := 0
	spaceBuffer := []byte{}

	for i := 0; i < len(input); {
		r, size := utf8.DecodeRune(input[i:])

		if r == '\n' {
			newlineCount++
			if newlineCount <= 2 {
				result = append(result, spaceBuffer...)
				result = append(result, '\n')
				spaceBuffer = spaceBuffer[:0]
			} else {
				spaceBuffer = spaceBuffer[:0]
			}
		} else if r == ' ' {
			spaceBuffer = append(spaceBuffer, input[i:i+size]...)
		} else {
			newlineCount = 0
			result = append(result, spaceBuffer...)
			result = append(result, input[i:i+size]...)
			spaceBuffer = spaceBuffer[:0]
		}

		i += size
	}

	result = append(result, spaceBuffer...)

	return result
}

func FuzzTrimConsecutiveNewlinesAsReleased(f *testing.F) {
	for _, s := range []string{"", "a", "a  \n\n\n  b", "\n\n\n", "   ", "äöü\n\n\näöü", "\xff\n \n\xe2\x82", "- a\n  \n  - b  "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		want := trimConsecutiveNewlinesReleased(bytes.Clone(input))
		got := TrimConsecutiveNewlines(input)
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("TrimConsecutiveNewlines(%q) = %q, the released version gives %q", input, got, want)
		}
	})
}
