package textutils

import (
	"bytes"
)

func TrimUnnecessaryHardLineBreaks(content []byte) []byte {
	// bytes.ReplaceAll copies the content even when nothing matches,
	// which for the whole document is three copies of it; the common case
	// of no hard line break before a blank line costs none.
	if !bytes.Contains(content, []byte("  \n")) {
		return content
	}
	content = bytes.ReplaceAll(content, []byte("  \n\n"), []byte("\n\n"))
	content = bytes.ReplaceAll(content, []byte("  \n  \n"), []byte("\n\n"))
	content = bytes.ReplaceAll(content, []byte("  \n \n"), []byte("\n\n"))
	// out = bytes.ReplaceAll(out, []byte("\n  \n"), []byte("\n\n"))

	return content
}

func TrimConsecutiveNewlines(input []byte) []byte {
	// Byte by byte, and a run of other characters copied at once: only
	// '\n' and ' ' matter, and neither occurs inside a UTF-8 sequence, so
	// this gives what decoding rune by rune gave (the released module),
	// several times faster. Spaces are held back, as a count, until it is
	// known whether a newline beyond the second drops them.
	var result []byte
	if len(input) > 0 {
		// The result is never longer than the input: one allocation
		// instead of growing by appends (for the whole document, about
		// twice its size allocated, copied and thrown away).
		result = make([]byte, 0, len(input))
	}
	newlineCount := 0
	spaces := 0

	for i := 0; i < len(input); {
		switch input[i] {
		case '\n':
			newlineCount++
			if newlineCount <= 2 {
				// Preserve up to 2 newlines, including preceding spaces
				result = appendSpaces(result, spaces)
				result = append(result, '\n')
			}
			spaces = 0
			i++
		case ' ':
			spaces++
			i++
		default:
			newlineCount = 0
			result = appendSpaces(result, spaces)
			spaces = 0
			j := i + 1
			for j < len(input) && input[j] != '\n' && input[j] != ' ' {
				j++
			}
			result = append(result, input[i:j]...)
			i = j
		}
	}

	// Append any trailing spaces
	return appendSpaces(result, spaces)
}

func appendSpaces(b []byte, n int) []byte {
	for ; n > 0; n-- {
		b = append(b, ' ')
	}
	return b
}

/*
func TrimConsecutiveNewlines(source []byte) []byte {
	// Some performance optimizations:
	// - If no replacement was done, we return the original slice and don't allocate.
	// - We batch appends

	var ret []byte

	startNormal := 0
	startMatch := -1

	count := 0
	// for i, b := range source {
	for i := 0; i < len(source); i++ {
		r, size := utf8.DecodeRune(source[i:])
		_ = size

		isNewline := r == '\n' // || r == marker.MarkerLineBreak
		if isNewline {
			count += 1
		}

		if startMatch == -1 && isNewline {
			// Start of newlines
			startMatch = i
			i = i + size - 1
			continue
		} else if startMatch != -1 && isNewline {
			// Middle of newlines
			i = i + size - 1
			continue
		} else if startMatch != -1 {
			// Character after the last newline character

			if count > 2 {
				if ret == nil {
					ret = make([]byte, 0, len(source))
				}

				ret = append(ret, source[startNormal:startMatch]...)
				ret = append(ret, '\n', '\n')
				startNormal = i
			}

			startMatch = -1
			count = 0
		}
	}

	getStartEnd := func() (int, int, bool, bool) {
		if startMatch == -1 && startNormal == 0 {
			// a) no changes need to be done
			return -1, -1, false, false
		}

		if count <= 2 {
			// b) Only the normal characters still need to be added
			return startNormal, len(source), true, false
		}

		// c) The match still needs to be replaced (and possible the previous normal characters be added)
		return startNormal, startMatch, true, true
	}

	start, end, isKeepNeeded, isReplaceNeeded := getStartEnd()
	if isKeepNeeded {
		if ret == nil {
			ret = make([]byte, 0, len(source))
		}

		ret = append(ret, source[start:end]...)
		if isReplaceNeeded {
			ret = append(ret, '\n', '\n')
		}
	}

	if ret == nil {
		// Hurray, we did not do any allocations with make()
		// and instead just return the original slice.
		return source
	}
	return ret
}
*/
