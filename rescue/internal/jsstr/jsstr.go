// Package jsstr holds the string rules of JavaScript that the host's
// apply_patch tool (a JavaScript program) applies and that slim's parser and
// comparators follow: the whitespace set of String.prototype.trim, the trims
// built on it, and an ASCII test that lets callers skip Unicode work.
package jsstr

import (
	"strings"
	"unicode/utf8"
)

// IsSpace reports whether r is removed by JavaScript's String.prototype.trim:
// the WhiteSpace and LineTerminator sets of ECMAScript. It differs from
// unicode.IsSpace on U+FEFF (space here) and U+0085 (not space here).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ',
		0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// TrimEnd removes trailing JavaScript whitespace from s, like trimEnd.
func TrimEnd(s string) string {
	return strings.TrimRightFunc(s, IsSpace)
}

// Trim removes leading and trailing JavaScript whitespace from s, like trim.
func Trim(s string) string {
	return strings.TrimFunc(s, IsSpace)
}

// TrimStart removes leading JavaScript whitespace from s, like trimStart.
func TrimStart(s string) string {
	return strings.TrimLeftFunc(s, IsSpace)
}

// IsASCII reports whether s holds only ASCII bytes, eight at a time.
func IsASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
