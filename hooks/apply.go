package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/rescue"
)

// This file is apply mode: the plugin's own apply_patch tool, which takes
// the place of the host's, runs one `slim hook apply` for the whole call.
// It is a conversation rather than one answer, because the host's edit
// permission must be asked between the check and the write:
//
//  1. the loop guard may refuse the call, as the before phase would;
//  2. a dry run checks the patch (containment, rescue, refusals) and
//     computes what would be written;
//  3. the plugin asks the host's edit permission for those files, with
//     that diff, and answers;
//  4. the patch is applied, all files or none, bound to the bytes the dry
//     run read, so what is written is what was approved;
//  5. the formatters the host would have run after its own write run;
//  6. the loop guard counts the call, as the after phase would, and the
//     result is worded as the host's own tool words it.

// FormatReport is what the formatters did to one file an apply wrote.
type FormatReport struct {
	Path       string   `json:"path"`
	Formatters []string `json:"formatters"`
	Changed    bool     `json:"changed"`
	EOLFlipped bool     `json:"eolFlipped,omitempty"`
	EOLBefore  string   `json:"eolBefore,omitempty"`
	EOLAfter   string   `json:"eolAfter,omitempty"`
	// Error says why the file was not formatted or a formatter failed;
	// the patch stays applied either way.
	Error string `json:"error,omitempty"`
}

// notApproved is the refusal when the plugin does not approve the write
// (the user rejected it, or the plugin went away).
const notApproved = "apply_patch: the edit was not approved, so nothing was written"

// Apply runs apply mode's whole apply_patch call for req (phase apply).
// approve is called once with the host permission request when the patch
// changes any file; it returns whether the user approved. ctx ends the
// call: cancelled while the files are written, everything written is put
// back. The answer is a result or a block; every refusal leaves the files
// as they were.
func (d *Dispatcher) Apply(ctx context.Context, req *protocol.Request, approve func(*protocol.EditAsk) (bool, error)) protocol.ApplyAnswer {
	patch, ok := req.ArgsObject()["patchText"].(string)
	if !ok || patch == "" {
		return applyBlock("patchText is required", "apply: no patch")
	}
	if d.Loop != nil {
		refusal, err := d.Loop.Before(loopTool(req), req.SessionID, req.Args)
		switch {
		case err != nil:
			d.Log.Warn().Err(err).Str("session", req.SessionID).Msg("loop guard unavailable; passing")
		case refusal != "":
			return applyBlock(refusal, "loop guard: refused")
		}
	}
	opts := d.patchOptions(req)
	opts.Outside = rescue.OutsideBlock
	opts.DryRunDiff, opts.Report = true, true
	dry, err := d.checkPatch(ctx, patch, opts)
	if err != nil {
		return applyBlock(patchMessage(err), "apply: refused in the dry run")
	}
	base := hostBase(req.Host)
	if base == "" {
		// No directory in the request: rescue took the working directory.
		if wd, err := os.Getwd(); err == nil {
			base = wd
		}
	}
	if len(dry.Changes) > 0 {
		ask := editAsk(dry.Changes, base)
		ok, err := approve(ask)
		if err != nil || !ok {
			if err != nil {
				d.Log.Info().Err(err).Msg("apply: no approval")
			}
			return applyBlock(notApproved, "apply: not approved")
		}
	}
	opts.DryRunDiff, opts.Apply, opts.Expect, opts.Context, opts.BeforeWrite = false, true, dry.State, ctx, d.BeforeWrite
	process := d.process
	if process == nil {
		process = rescue.Process
	}
	res, err := process([]byte(patch), opts)
	if err != nil {
		return applyBlock(patchMessage(err), "apply: refused")
	}
	var formatted []FormatReport
	if d.Format != nil {
		formatted = d.Format(opts.Directory, res.Written())
	}
	output := applySummary(res.Changes, formatted, base)
	var notes []string
	if notice, note := d.loopAfter(req, output); note != "" {
		output += notice
		notes = append(notes, note)
	}
	files, diff := editFiles(res.Changes, base)
	return protocol.ApplyAnswer{V: protocol.Version, Action: protocol.Result, Title: strings.SplitN(output, "\n", 2)[0], Output: output,
		Metadata: &protocol.EditMetadata{Diff: diff, Files: files, Diagnostics: map[string]any{}}, Notes: notes}
}

func applyBlock(msg, note string) protocol.ApplyAnswer {
	return protocol.ApplyAnswer{V: protocol.Version, Action: protocol.Block, Message: msg, Notes: []string{note}}
}

// patchMessage is the message of a refused patch: rescue's own, which
// carries the prefixes models know, or an internal error.
func patchMessage(err error) string {
	if re := new(rescue.Error); errors.As(err, &re) {
		return re.Message
	}
	return "apply_patch internal error: " + err.Error()
}

// hostBase is the directory the host names files relative to in its
// permission requests and its apply_patch answer: its worktree ("/" outside
// git, as it spells it), else the session directory.
func hostBase(h protocol.Host) string {
	if h.Worktree != "" {
		return h.Worktree
	}
	if h.Directory != "" {
		return h.Directory
	}
	return h.Cwd
}

// rel spells abs relative to base with forward slashes.
func rel(base, abs string) string {
	r, err := filepath.Rel(base, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// editAsk is the host permission request for changes: every file written or
// removed, a move's destination too (the host's own tool names only its
// source), each once.
func editAsk(changes []rescue.Change, base string) *protocol.EditAsk {
	var patterns []string
	seen := map[string]bool{}
	for _, c := range changes {
		for _, a := range []string{c.Abs, c.MoveAbs} {
			if a == "" {
				continue
			}
			if r := rel(base, a); !seen[r] {
				seen[r] = true
				patterns = append(patterns, r)
			}
		}
	}
	files, diff := editFiles(changes, base)
	return &protocol.EditAsk{Permission: "edit", Patterns: patterns, Always: []string{"*"},
		Metadata: protocol.EditMetadata{Filepath: strings.Join(patterns, ", "), Diff: diff, Files: files}}
}

// editFiles gives changes in the host's shape, and the whole diff.
func editFiles(changes []rescue.Change, base string) ([]protocol.EditFile, string) {
	files := []protocol.EditFile{}
	var diff strings.Builder
	for _, c := range changes {
		f := protocol.EditFile{FilePath: c.Abs, RelativePath: rel(base, c.Abs), Type: c.Op, Patch: c.Diff, Additions: c.Additions, Deletions: c.Deletions}
		if c.MoveAbs != "" {
			f.Type, f.MovePath, f.RelativePath = "move", c.MoveAbs, rel(base, c.MoveAbs)
		}
		files = append(files, f)
		diff.WriteString(c.Diff)
		diff.WriteByte('\n')
	}
	return files, diff.String()
}

// applySummary is what the model reads after an apply: the host's own
// summary (A, M or D and the path, a move under its new name), then a line
// for each file a formatter changed or failed on.
func applySummary(changes []rescue.Change, formatted []FormatReport, base string) string {
	var b strings.Builder
	if len(changes) == 0 {
		b.WriteString("Success. The patch changes nothing: every file already holds its text.")
	} else {
		b.WriteString("Success. Updated the following files:")
	}
	for _, c := range changes {
		switch {
		case c.Op == "add":
			fmt.Fprintf(&b, "\nA %s", rel(base, c.Abs))
		case c.Op == "delete":
			fmt.Fprintf(&b, "\nD %s", rel(base, c.Abs))
		case c.MoveAbs != "":
			fmt.Fprintf(&b, "\nM %s", rel(base, c.MoveAbs))
		default:
			fmt.Fprintf(&b, "\nM %s", rel(base, c.Abs))
		}
	}
	for _, f := range formatted {
		r := rel(base, f.Path)
		switch {
		case f.Error != "":
			fmt.Fprintf(&b, "\n%s: %s", r, f.Error)
		case f.Changed && f.EOLFlipped:
			fmt.Fprintf(&b, "\nFormatted %s with %s (line endings %s -> %s); read it again before the next patch.", r, strings.Join(f.Formatters, ", "), f.EOLBefore, f.EOLAfter)
		case f.Changed:
			fmt.Fprintf(&b, "\nFormatted %s with %s; read it again before the next patch.", r, strings.Join(f.Formatters, ", "))
		}
	}
	return b.String()
}
