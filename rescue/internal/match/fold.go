package match

import (
	"strings"
	"unicode/utf8"

	"github.com/slimgate/slim/rescue/internal/jsstr"
	"golang.org/x/text/unicode/norm"
)

// This file holds the line comparators of the matching ladder: the Unicode
// fold, the JavaScript whitespace set used for trimming, and the per-rung
// keys. Two lines match on a rung when their keys for that rung are equal.

// Rung names, strictest first. They are also the strategy names reported for
// a seek match.
const (
	StrategyExact          = "exact"
	StrategyUnicode        = "unicode"
	StrategyTrimEnd        = "trim-end"
	StrategyUnicodeTrimEnd = "unicode-trim-end"
	StrategyNFC            = "nfc"
	StrategyTrailingEmpty  = "trailing-empty-retry"
	StrategyPrefixSuffix   = "prefix-suffix"
	StrategyLCS            = "lcs"
	StrategyIndent         = "indent"
	StrategyEditedEdge     = "edited-edge"
	StrategyAlreadyApplied = "already-applied"
	StrategyAnchor         = "anchor"
	StrategyEOFInsert      = "eof-insert"
)

// rung is one comparator of the ladder.
type rung int

const (
	rungExact rung = iota
	rungUnicode
	rungTrimEnd
	rungUnicodeTrimEnd
	rungNFC
	numRungs
)

var rungNames = [numRungs]string{StrategyExact, StrategyUnicode, StrategyTrimEnd, StrategyUnicodeTrimEnd, StrategyNFC}

// rungKey returns the key of s on rung r.
func rungKey(r rung, s string) string {
	switch r {
	case rungExact:
		return s
	case rungUnicode:
		return foldUnicode(s)
	case rungTrimEnd:
		return jsstr.TrimEnd(s)
	case rungUnicodeTrimEnd:
		return foldUnicode(jsstr.TrimEnd(s))
	default:
		return ladderKey(s)
	}
}

// ladderKey is the key of the loosest rung, NFC(fold(trim-end(s))). Every
// rung's equality implies equality of this key, so two lines match on some
// rung exactly when their ladder keys are equal.
func ladderKey(s string) string {
	if jsstr.IsASCII(s) {
		return trimEndASCII(s)
	}
	return norm.NFC.String(foldUnicode(jsstr.TrimEnd(s)))
}

// lineKey is the key used for scoring and for the prefix/suffix and LCS
// agreement checks: fold(trim(s)), trimming both ends. It is never a
// matching rung on its own, because it crosses indentation levels.
func lineKey(s string) string {
	if jsstr.IsASCII(s) {
		return strings.TrimRight(strings.TrimLeft(s, " \t\v\f\r\n"), " \t\v\f\r\n")
	}
	return foldUnicode(jsstr.Trim(s))
}

func isASCIISpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\v' || b == '\f' || b == '\r' || b == '\n'
}

func trimEndASCII(s string) string {
	i := len(s)
	for i > 0 && isASCIISpace(s[i-1]) {
		i--
	}
	return s[:i]
}

// foldRune maps r to its folded replacement. ok is false when r is kept.
func foldRune(r rune) (string, bool) {
	switch r {
	case 0x2018, 0x2019, 0x201A, 0x201B:
		return "'", true
	case 0x201C, 0x201D, 0x201E, 0x201F:
		return `"`, true
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212:
		return "-", true
	case 0x2026:
		return "...", true
	case 0x00A0, 0x202F, 0x205F, 0x3000:
		return " ", true
	}
	if r >= 0x2002 && r <= 0x200A {
		return " ", true
	}
	return "", false
}

// foldUnicode applies the fold of the unicode rung: typographic quotes and
// dashes (and U+2212 MINUS SIGN) become their ASCII forms, the ellipsis
// becomes three dots, and the no-break and typographic spaces become a space.
// Nothing else changes; s is returned as is when nothing folds.
func foldUnicode(s string) string {
	first := -1
	for i, r := range s {
		if r < 0x00A0 {
			continue
		}
		if _, ok := foldRune(r); ok {
			first = i
			break
		}
	}
	if first < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if rep, ok := foldRune(r); ok {
			b.WriteString(rep)
		} else {
			b.WriteString(s[i : i+size]) // keeps invalid bytes as they are
		}
		i += size
	}
	return b.String()
}
