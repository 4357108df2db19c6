// Package rescue validates, rescues, renders and applies Codex-format
// apply_patch patches. A stale patch (unicode or whitespace drift, moved
// code, stale context) is matched against the files on disk with a ladder of
// comparators and bounded rescues; the result is either a rewritten patch
// whose application gives exactly the intended text, or a refusal that leaves
// every file byte-identical.
package rescue

// This file is the contract between the patch model (parser, engine,
// renderer, apply) and the matcher (match*.go). Changes must be additive.

// Op is the operation of one chunk body line.
type Op byte

const (
	OpContext Op = ' '
	OpDelete  Op = '-'
	OpAdd     Op = '+'
)

// ChunkLine is one body line of a chunk. Text excludes the op character and
// the line terminator.
type ChunkLine struct {
	Op   Op
	Text string
	Line int // 1-based line in the input patch (0 when synthesised)
}

// Context is one "@@ text" line of a chunk. Stacked contexts narrow one after
// the other, outermost first.
type Context struct {
	Text string
	Line int // 1-based line in the input patch
}

// Chunk is one @@ section of an Update File hunk.
type Chunk struct {
	Contexts []Context
	Lines    []ChunkLine
	EOF      bool // followed by "*** End of File"
	Line     int  // 1-based patch line where the chunk starts
}

// OldLines returns the context and removed lines, in order: what the chunk
// expects to find in the file.
func (c *Chunk) OldLines() []string {
	var out []string
	for _, l := range c.Lines {
		if l.Op != OpAdd {
			out = append(out, l.Text)
		}
	}
	return out
}

// PlacedLine is one line of a placed chunk. Context and delete lines refer to
// the file line they stand for (FileLine, 0-based) and carry its bytes; add
// lines carry the authored text (FileLine -1).
type PlacedLine struct {
	Op       Op
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
	Repairs []Repair
	// Cursor is where the next chunk of the same hunk starts searching.
	Cursor int
}

// Repair is one normalisation or rescue step, reported in --json.
type Repair struct {
	Kind string `json:"kind"`
	Line int    `json:"line,omitempty"` // 1-based line of the input patch
}
