// Package patch is the grammar of Codex-format apply_patch patches: the
// parsed form (a Patch of Hunks, an Update's Chunks of ChunkLines), the
// parser, which also accepts a few harmless variants and records each as a
// Repair, and the canonical rendering.
package patch

import "strings"

// Op is the operation of one chunk body line.
type Op byte

// The three body line operations, spelt as their first character.
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

// HunkKind is the operation of one file section.
type HunkKind int

// The three file operations.
const (
	HunkAdd HunkKind = iota
	HunkDelete
	HunkUpdate
)

func (k HunkKind) String() string {
	switch k {
	case HunkAdd:
		return "add"
	case HunkDelete:
		return "delete"
	default:
		return "update"
	}
}

// Hunk is one file operation of a patch.
type Hunk struct {
	Kind HunkKind
	Path string // as written, trimmed
	Move string // Update only; "" when none
	// Add holds the text after each "+" of an Add body.
	Add    []string
	Chunks []*Chunk
	Line   int // 1-based patch line of the header
}

// Patch is a parsed patch.
type Patch struct {
	Hunks   []*Hunk
	Repairs []Repair
}

// Repair is one normalisation or rescue step: what was accepted or changed
// on the way from the patch as written to the patch handed on.
type Repair struct {
	Kind string
	Line int // 1-based line of the input patch; 0 when it names none
	// Detail says more where the kind alone does not: for indentation,
	// the mapping of leading whitespace that was applied.
	Detail string
}

// Repair kinds. The parser records the first eight, the matcher the next
// four, and the engine the rest. They are reported in `slim rescue --json`,
// so their spelling is part of the output.
const (
	RepairPatchEOL          = "patch_eol"            // CR or CRLF line ends in the patch
	RepairHeredoc           = "heredoc"              // a shell heredoc around the patch
	RepairApplyPatchPrefix  = "apply_patch_prefix"   // an "apply_patch <<'EOF'" line around it
	RepairCodeFence         = "code_fence"           // a Markdown code fence around it
	RepairPaddedMarker      = "padded_marker"        // whitespace around a Begin, End or End of File marker
	RepairPaddedHeader      = "padded_header"        // whitespace before a hunk header or Move to
	RepairMissingChunkHead  = "missing_chunk_header" // body lines of an Update before its first @@
	RepairBlankContextLine  = "blank_context_line"   // an empty line read as an empty context line
	RepairContextNotFound   = "context_not_found"    // an @@ text not in the file, dropped
	RepairUnifiedDiffHeader = "unified_diff_header"  // an @@ text that is a unified-diff range, dropped
	RepairIndentation       = "indentation"          // the chunk placed through one mapping of leading whitespace (Detail names it)
	RepairAlreadyApplied    = "already_applied"      // the chunk's change is already in the file; nothing is written for it
	RepairNestedContext     = "nested_context"       // stacked @@ lines read as nested narrowing
	RepairAbsolutePath      = "absolute_path"        // an absolute path written relative to the session
	RepairSelfMoveDropped   = "self_move_dropped"    // a Move to the file itself, dropped
	RepairSamePathMerged    = "same_path_merged"     // several hunks on one file merged into one
	RepairHostEOL           = "host_eol"             // CRs kept inside lines so the host writes CRLF
)

// The envelope and header lines of the grammar.
const (
	BeginMarker  = "*** Begin Patch"
	EndMarker    = "*** End Patch"
	EOFMarker    = "*** End of File"
	AddHeader    = "*** Add File:"
	DeleteHeader = "*** Delete File:"
	UpdateHeader = "*** Update File:"
	MoveHeader   = "*** Move to:"
)

// ValidationPrefix starts the message of every validation error: the
// patch's text is malformed, or larger than slim checks.
const ValidationPrefix = "apply_patch validation failed: "

// Format renders a parsed patch in canonical form: the plain envelope,
// single-space headers, an "@@" line before every chunk, blank context
// lines as a single space. Parse(Format(p)) gives p back.
func (p *Patch) Format() string {
	var b strings.Builder
	b.WriteString(BeginMarker + "\n")
	for _, h := range p.Hunks {
		switch h.Kind {
		case HunkAdd:
			b.WriteString(AddHeader + " " + h.Path + "\n")
			for _, l := range h.Add {
				b.WriteString("+" + l + "\n")
			}
		case HunkDelete:
			b.WriteString(DeleteHeader + " " + h.Path + "\n")
		case HunkUpdate:
			b.WriteString(UpdateHeader + " " + h.Path + "\n")
			if h.Move != "" {
				b.WriteString(MoveHeader + " " + h.Move + "\n")
			}
			for _, c := range h.Chunks {
				if len(c.Contexts) == 0 {
					b.WriteString("@@\n")
				}
				for _, ctx := range c.Contexts {
					b.WriteString("@@ " + ctx.Text + "\n")
				}
				for _, l := range c.Lines {
					b.WriteString(string(rune(l.Op)) + l.Text + "\n")
				}
				if c.EOF {
					b.WriteString(EOFMarker + "\n")
				}
			}
		}
	}
	b.WriteString(EndMarker + "\n")
	return b.String()
}
