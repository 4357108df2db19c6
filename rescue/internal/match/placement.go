// Package match finds where a chunk of a patch lands in a file. A FileView
// indexes one file's lines once; Place tries the ladder of comparators
// (exact, then Unicode fold, trim-end, both, and NFC) and then the bounded
// rescues (the trailing-empty retry, prefix/suffix and LCS), and returns a
// Placement, or an *Error when the chunk is not found or more than one
// place could be meant: a rescue never picks one of several candidates.
package match

import "github.com/slimgate/slim/rescue/internal/patch"

// PlacedLine is one line of a placed chunk. Context and delete lines refer to
// the file line they stand for (FileLine, 0-based) and carry its bytes; add
// lines carry the authored text (FileLine -1).
type PlacedLine struct {
	Op       patch.Op
	FileLine int
	Text     string
}

// Placement is where and how a chunk lands in a file's lines: file lines
// [Start, End) are replaced by the context and add lines of Lines, in order.
// For a pure insertion Start == End is the insertion point.
type Placement struct {
	Start, End int
	// Lines in render order: the author's order for a seek match, file order
	// (with "-" before "+" in each changed block) when ShapeChanged.
	Lines        []PlacedLine
	ShapeChanged bool
	// Strategy is one of exact, unicode, trim-end, unicode-trim-end, nfc,
	// trailing-empty-retry, prefix-suffix, lcs, anchor, eof-insert.
	Strategy string
	// Candidates are the 1-based start lines of every accepted candidate.
	Candidates []int
	// Score and Needed are set for lcs and prefix-suffix.
	Score, Needed int
	// Contexts holds, for each @@ context of the chunk, the 0-based file line
	// it matched, or -1 when it was not found and dropped.
	Contexts []int
	// EOFKept is false when an "*** End of File" chunk fell back to a forward
	// scan and the marker must be left out of the output.
	EOFKept bool
	// Repairs made while placing (context_not_found, unified_diff_header,
	// nested_context, ...).
	Repairs []patch.Repair
	// Cursor is where the next chunk of the same hunk starts searching.
	Cursor int
}
