// Package rescue validates, rescues, renders and applies Codex-format
// apply_patch patches. A stale patch (unicode or whitespace drift, moved
// code, stale context) is matched against the files on disk with a ladder of
// comparators and bounded rescues; the result is either a rewritten patch
// whose application gives exactly the intended text, or a refusal that leaves
// every file byte-identical.
//
// Process is the one entry point. Options say where the session lives and
// whether to hand a patch on, apply it or compute a diff; the Result says
// what was decided (one of the Decision values) and how (Repairs, Files,
// Chunks, NativeCheck). The patch grammar, the matcher and the model of the
// host's own apply step live in internal packages.
package rescue

import (
	"context"

	"github.com/slimgate/slim/worktree/hostpath"
)

// Limits on what Process reads. A patch or a target above them is refused
// with a validation error that names the limit, before it is read whole.
const (
	// MaxPatchSize is the largest patch Process accepts, in bytes.
	MaxPatchSize = 64 << 20
	// MaxFileSize is the largest target file Process reads, in bytes.
	MaxFileSize = 128 << 20
	// MaxHunks is the most file operations one patch may hold.
	MaxHunks = 100000
)

// HostProfile names the host version whose apply step the native check
// models (Result.NativeCheck.Profile): a patch is handed on only when that
// model writes exactly the intended text.
const HostProfile = "opencode-1.18.33"

// Decisions reported in Result.Decision.
const (
	DecisionUnchanged   = "unchanged"
	DecisionRewrite     = "rewrite"
	DecisionPassthrough = "passthrough"
	DecisionBlock       = "block"
)

// Outside policies, for Options.Outside: what to do with a patch whose
// target lies outside the workspace by its spelling. Block refuses it;
// passthrough hands it on untouched, so that the host asks the user itself.
const (
	OutsideBlock       = "block"
	OutsidePassthrough = "passthrough"
)

// Options tell Process where the session lives and what to do with the
// patch.
type Options struct {
	// Directory is the session's directory; relative patch paths resolve
	// against it. Empty means the process's working directory.
	Directory string
	// Worktree is the session's worktree top level. Empty means "find it"
	// (worktree.Resolve from Directory), unless NoWorktree is set.
	Worktree string
	// NoWorktree says the session has no worktree: the allowed area is the
	// directory alone.
	NoWorktree bool
	// Flavor gives the host's path rules (posix or win32).
	Flavor hostpath.Flavor
	// Outside is "block" or "passthrough"; empty means block. Passthrough
	// applies only when every offending target is outside by its spelling,
	// and never with Apply or DryRunDiff. Process reads no environment: the
	// caller decides (slim's CLI passes SLIM_OUTSIDE).
	Outside string
	// AllowNested lets targets inside nested worktrees count as inside
	// (slim's CLI sets it from SLIM_ALLOW_NESTED=1).
	AllowNested bool
	// Apply writes the files (all or none) instead of handing on a patch.
	Apply bool
	// DryRunDiff computes Result.Diff and writes nothing.
	DryRunDiff bool
	// Report, with Apply or DryRunDiff, fills Result.Changes and
	// Result.State: a per-file diff of everything written and a
	// fingerprint of everything read, for a caller that shows the write or
	// binds a later one to it. They cost a diff and a hash of every touched
	// file, so a plain apply leaves them out.
	Report bool
	// Expect, with Apply, is the State of an earlier dry run of the same
	// patch, typically the one a user approved: Apply writes nothing and
	// fails with a verification error when any file the patch reads is not
	// as it was then, so what is written is what was shown. Empty means no
	// such check.
	Expect string
	// Context bounds the work. When its deadline passes, Process stops and
	// returns a blocked error (code budget_exceeded) that wraps
	// context.DeadlineExceeded; when it is cancelled (an interrupt) during
	// Apply, every file written so far is restored and the error wraps
	// context.Canceled. Nil means no bound.
	Context context.Context

	// BeforeWrite, when set, runs before Apply writes (or removes) its i-th
	// file, after every file was compared with the bytes read. When
	// Context ends while it runs, nothing more is written and what was
	// written is rolled back. It lets a caller (a test of interruption)
	// stop an apply between two files.
	BeforeWrite func(i int)

	// Test seam: afterCheck runs once containment is decided, before any
	// file is read.
	afterCheck func()
}

// Result is what Process decided, in the shape of `slim rescue --json`.
type Result struct {
	Decision    string        `json:"decision"`
	Changed     bool          `json:"changed"`
	PatchText   *string       `json:"patchText,omitempty"`
	Applied     *bool         `json:"applied,omitempty"`
	Repairs     []Repair      `json:"repairs"`
	Files       []FileReport  `json:"files"`
	Chunks      []ChunkReport `json:"chunks"`
	NativeCheck NativeCheck   `json:"nativeCheck"`
	// Warnings are notes on targets that are inside but deserve a word (a
	// file with several hard links shares its data with other paths).
	Warnings []string `json:"warnings,omitempty"`
	// Diff is the unified diff of what would be written (DryRunDiff only).
	Diff string `json:"-"`
	// Changes lists every file that is (Apply) or would be (DryRunDiff)
	// written or removed, each with its own diff (Options.Report only).
	Changes []Change `json:"changes,omitempty"`
	// State fingerprints the bytes of every file the patch read, in a
	// dry run or an apply (Options.Report only); passing it back as
	// Options.Expect binds a later Apply to exactly those bytes.
	State string `json:"state,omitempty"`
}

// Written lists the absolute paths of the files Changes leaves with new
// content (a move's destination; not a removed file), in order.
func (r *Result) Written() []string {
	var out []string
	for _, c := range r.Changes {
		switch {
		case c.Op == "delete":
		case c.MoveAbs != "":
			out = append(out, c.MoveAbs)
		default:
			out = append(out, c.Abs)
		}
	}
	return out
}

// Change is one file a dry run or an apply writes or removes. Path and
// Move are spelled as in the patch; Abs and MoveAbs are the absolute paths
// they name (lexically, links not followed). Diff is its git-style unified
// diff, and Additions and Deletions count its added and removed lines.
type Change struct {
	Path      string `json:"path"`
	Abs       string `json:"abs"`
	Op        string `json:"op"` // add, delete, update (a Move is an update with Move set)
	Move      string `json:"move,omitempty"`
	MoveAbs   string `json:"moveAbs,omitempty"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
	Diff      string `json:"diff"`
}

// Repair is one normalisation or rescue step, reported in --json. Kind is
// one of patch_eol, heredoc, apply_patch_prefix, code_fence, padded_marker,
// padded_header, missing_chunk_header, blank_context_line (accepted variants
// of the format), context_not_found, unified_diff_header (an @@ line that
// names nothing in the file, dropped), indentation (a chunk placed through
// one mapping of leading whitespace, named in Detail; its added lines
// follow the mapping), already_applied (a chunk whose change is already in
// the file, left as it is), nested_context (stacked @@ lines read
// as nested narrowing), absolute_path, self_move_dropped, same_path_merged
// (paths and hunks normalised) and host_eol (CRs kept inside the lines so
// that the host writes CRLF).
type Repair struct {
	Kind string `json:"kind"`
	Line int    `json:"line,omitempty"` // 1-based line of the input patch
	// Detail says more where the kind alone does not: for indentation,
	// the mapping of leading whitespace (for example `"\t" -> "    "`).
	Detail string `json:"detail,omitempty"`
}

// FileReport describes one file the patch touches.
type FileReport struct {
	Path         string `json:"path"`
	Op           string `json:"op"` // add, delete, update
	Move         string `json:"move,omitempty"`
	EOL          string `json:"eol,omitempty"` // lf, crlf, cr
	FinalNewline bool   `json:"finalNewline"`
	BOM          bool   `json:"bom"`
}

// ChunkReport describes how one chunk was placed.
type ChunkReport struct {
	Index int    `json:"index"`
	Path  string `json:"path"`
	// Strategy is how the chunk was placed: the rung of an exact or tolerant
	// match (exact, unicode, trim-end, unicode-trim-end, nfc), a rescue
	// (trailing-empty-retry, prefix-suffix, lcs), or an insertion (anchor,
	// eof-insert). For a chunk refused as ambiguous it names the step that
	// refused it, exact standing for the seek over every rung.
	Strategy     string `json:"strategy"`
	Line         int    `json:"line"`
	OldCount     int    `json:"oldCount"`
	NewCount     int    `json:"newCount"`
	DeletedLines int    `json:"deletedLines"`
	Score        int    `json:"score,omitempty"`
	Needed       int    `json:"needed,omitempty"`
	Candidates   []int  `json:"candidates"`
	rescued      bool
}

// NativeCheck reports the host check of the handed-on patch.
type NativeCheck struct {
	Profile string `json:"profile"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}
