package rescue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/slimgate/slim/internal/safefs"
	"github.com/slimgate/slim/rescue/internal/hostmodel"
	"github.com/slimgate/slim/rescue/internal/match"
	"github.com/slimgate/slim/rescue/internal/patch"
	"github.com/slimgate/slim/worktree"
	"github.com/slimgate/slim/worktree/hostpath"
)

// Process validates the patch in input, checks every target for
// containment, resolves every chunk against the files, and then either hands
// on a patch (unchanged or rewritten), applies it (Options.Apply), or
// computes a diff (Options.DryRunDiff). The Result is never nil; on
// failure its Decision is "block" and the error is an *Error whose Kind
// says what went wrong.
//
// Errors come in this order: validation before any file is read;
// then containment of every target before any file is read; then
// verification or internal errors as they occur.
func Process(input []byte, opts Options) (*Result, error) {
	res, err := process(input, opts)
	if err != nil {
		res.Decision = DecisionBlock
		return res, asError(err)
	}
	return res, nil
}

func process(input []byte, opts Options) (*Result, error) {
	res := newResult()
	res.Decision = DecisionBlock
	outside := opts.Outside
	switch outside {
	case "", OutsideBlock, OutsidePassthrough:
	default:
		return res, &Error{Kind: Usage, Code: CodeUsage, Message: fmt.Sprintf("unknown outside policy %q (want block or passthrough)", outside)}
	}

	if len(input) > MaxPatchSize {
		return res, PatchTooLarge(MaxPatchSize)
	}
	p, err := patch.Parse(input)
	if err != nil {
		return res, err
	}
	res.Repairs = reportRepairs(res.Repairs, p.Repairs)
	if len(p.Hunks) > MaxHunks {
		return res, &Error{Kind: Validation, Code: CodeTooLarge,
			Message: fmt.Sprintf(patch.ValidationPrefix+"the patch has %d file operations, more than the %d slim checks at once; split it", len(p.Hunks), MaxHunks)}
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}

	dir := opts.Directory
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return res, internalErr(err, "cannot find the working directory: %v", err)
		}
	}
	if opts.Flavor.Concrete() == hostpath.Native.Concrete() && !filepath.IsAbs(dir) {
		if dir, err = filepath.Abs(dir); err != nil {
			return res, internalErr(err, "cannot resolve the session directory: %v", err)
		}
	}
	// One resolver feeds the guard the worktree and the git dirs.
	g, err := worktree.NewSessionGuard(dir, opts.Worktree, opts.NoWorktree, worktree.Options{AllowNested: opts.AllowNested, Flavor: opts.Flavor})
	if err != nil {
		return res, internalErr(err, "cannot resolve the session directory: %v", err)
	}
	// The top is opened once, before the first check, and must be the
	// directory the guard resolved; every read and write below it goes
	// through this handle.
	tree, err := g.OpenTree()
	if err != nil {
		fe := new(safefs.Error)
		switch {
		case errors.As(err, &fe) && fe.Reason == safefs.Changed:
			return res, &Error{Kind: Blocked, Code: CodePathChanged, Err: err,
				Message: "apply_patch blocked: the workspace root " + g.Top() + " changed while slim was checking it; nothing was written"}
		case errors.As(err, &fe) && fe.Reason == safefs.Denied:
			// The whole area is a git dir: the guard refuses every target
			// below, with its own message, and nothing is opened for writes.
		case opts.Apply:
			return res, internalErr(err, "cannot open the workspace root %s: %v", g.Top(), err)
		}
		tree = nil // print mode reads by path; the host writes
	}
	if tree != nil {
		defer tree.Close()
	}
	w := newWorld(ctx, dir, opts.Flavor, g, tree)

	// Containment of every target, before any file is read. The first
	// refused target ends the check, unless passthrough may still apply.
	passthrough := outside == OutsidePassthrough && !opts.Apply && !opts.DryRunDiff
	var bad []worktree.Verdict
check:
	for _, h := range p.Hunks {
		if err := budget(ctx); err != nil {
			return res, err
		}
		for _, path := range []string{h.Path, h.Move} {
			if path == "" {
				continue
			}
			v := w.check(path)
			if !v.Inside {
				bad = append(bad, v)
				if !passthrough || v.Code != CodeOutsideWorkspace || !v.BySpelling {
					break check
				}
			}
			for _, warn := range v.Warnings {
				// A target named by two hunks gives its warning once.
				if !slices.Contains(res.Warnings, warn) {
					res.Warnings = append(res.Warnings, warn)
				}
			}
		}
	}
	if len(bad) > 0 {
		pass := passthrough
		for _, v := range bad {
			if v.Code != CodeOutsideWorkspace || !v.BySpelling {
				pass = false
			}
		}
		if pass {
			res.Decision = DecisionPassthrough
			s := string(input)
			res.PatchText = &s
			res.NativeCheck.Message = "passed through untouched: a target is outside the workspace, so the host asks for permission itself"
			res.Warnings = nil
			return res, nil
		}
		res.Warnings = nil
		return res, g.BlockError("apply_patch", bad[0])
	}
	if opts.afterCheck != nil {
		opts.afterCheck()
	}

	r, err := w.partial(p)
	res.Repairs = reportRepairs(res.Repairs, r.repairs)
	res.Chunks = append(res.Chunks, r.chunks...)
	if err != nil {
		return res, err
	}
	res.Files = fileReports(r)
	rewrite := needsRewrite(p, r)

	switch {
	case opts.Apply || opts.DryRunDiff:
		res.Decision, res.Changed = DecisionUnchanged, false
		if rewrite {
			res.Decision, res.Changed = DecisionRewrite, true
		}
		res.NativeCheck.Message = "not run: slim writes the files itself"
		var changes []Change
		if opts.Report || opts.DryRunDiff {
			changes = w.changes(r)
		}
		if opts.Report {
			res.State, res.Changes = w.state(r), changes
		}
		if opts.DryRunDiff {
			res.Diff = joinDiffs(changes)
			return res, nil
		}
		applied := false
		res.Applied = &applied
		if opts.Expect != "" {
			if err := w.expect(r, opts.Expect); err != nil {
				res.Decision = DecisionBlock
				return res, err
			}
		}
		if err := w.apply(ctx, r, opts.BeforeWrite); err != nil {
			res.Decision = DecisionBlock
			return res, err
		}
		applied = true
		return res, nil
	}

	text, hostEOL, err := w.handOn(input, r, rewrite)
	if err != nil {
		res.NativeCheck.Message = message(err)
		return res, err
	}
	res.NativeCheck.OK = true
	if text != nil && *text == string(input) {
		text = nil
	}
	if text == nil {
		res.Decision = DecisionUnchanged
		s := string(input)
		res.PatchText = &s
		return res, nil
	}
	if hostEOL {
		res.Repairs = append(res.Repairs, Repair{Kind: patch.RepairHostEOL})
	}
	// Stacked @@ lines were read as nested narrowing; say so when the patch
	// is rewritten anyway (on their own they never force a rewrite).
	for _, h := range p.Hunks {
		for _, c := range h.Chunks {
			if len(c.Contexts) > 1 {
				res.Repairs = append(res.Repairs, Repair{Kind: patch.RepairNestedContext, Line: c.Contexts[1].Line})
			}
		}
	}
	res.Decision, res.Changed = DecisionRewrite, true
	res.PatchText = text
	return res, nil
}

// PatchTooLarge is the validation error for a patch above limit bytes.
// Readers of a patch (the CLI, the hook) return it when their bounded read
// stops at the limit.
func PatchTooLarge(limit int64) error {
	return &Error{Kind: Validation, Code: CodeTooLarge,
		Message: fmt.Sprintf(patch.ValidationPrefix+"the patch is larger than %d MiB, the largest slim reads; split it", limit>>20)}
}

// budget reports a deadline or cancellation of ctx as the error Process
// returns.
func budget(ctx context.Context) error {
	err := ctx.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: Blocked, Code: CodeBudget, Err: err,
			Message: "apply_patch blocked: slim could not finish checking this patch within its time budget; split it into smaller patches"}
	}
	return &Error{Kind: Internal, Code: CodeInternal, Err: err,
		Message: internalPrefix + "interrupted before anything was written"}
}

// reportRepairs appends the repairs rs to dst, in the shape of the Result.
func reportRepairs(dst []Repair, rs []patch.Repair) []Repair {
	for _, r := range rs {
		dst = append(dst, Repair(r))
	}
	return dst
}

func newResult() *Result {
	return &Result{Repairs: []Repair{}, Files: []FileReport{}, Chunks: []ChunkReport{}, NativeCheck: NativeCheck{Profile: HostProfile}}
}

// Rescued reports whether a chunk needed more than the author wrote (a
// tolerant match, a rescue, or an insertion turned into a host-safe form).
func (c ChunkReport) Rescued() bool { return c.rescued }

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// needsRewrite reports whether the input patch cannot be handed on as is:
// a repair was made, a chunk was rescued or reshaped, or hunks were merged.
func needsRewrite(p *patch.Patch, r *resolution) bool {
	if len(p.Repairs) > 0 || len(r.repairs) > 0 {
		return true
	}
	for _, l := range r.lineages {
		if l.hunks > 1 {
			return true
		}
		for i, pl := range l.placements {
			ch := l.chunks[i]
			if chunkRescued(pl, ch, l.base.lines) || (ch.EOF && !pl.EOFKept) {
				return true
			}
		}
	}
	return false
}

// chunkRescued reports whether a chunk needed more than the author wrote:
// a tolerant rung, a reshaped placement, an insertion inside the file, or an
// anchor that matched only tolerantly.
func chunkRescued(pl *match.Placement, ch *patch.Chunk, lines []string) bool {
	if pl.ShapeChanged {
		return true
	}
	switch pl.Strategy {
	case match.StrategyExact, match.StrategyEOFInsert:
		return false
	case match.StrategyAnchor:
		if pl.Start < len(lines) {
			return true
		}
		for k, c := range ch.Contexts {
			if k < len(pl.Contexts) && pl.Contexts[k] >= 0 && lines[pl.Contexts[k]] != c.Text {
				return true
			}
		}
		return false
	}
	return true
}

func fileReports(r *resolution) []FileReport {
	out := []FileReport{}
	for _, l := range r.lineages {
		var f FileReport
		switch {
		case l.origin == "" && l.dest == "":
			continue
		case l.origin == "":
			f = FileReport{Path: l.destPath, Op: "add", EOL: "lf", FinalNewline: l.cur.finalNewline() || len(l.cur.lines) == 0, BOM: l.cur.bom}
		case l.dest == "":
			f = FileReport{Path: l.srcPath, Op: "delete", EOL: eolName(l.base.eol), FinalNewline: l.base.finalNewline(), BOM: l.base.bom}
		default:
			f = FileReport{Path: l.srcPath, Op: "update", EOL: eolName(l.base.eol), FinalNewline: !l.base.noFinal, BOM: l.base.bom}
			if l.dest != l.origin {
				f.Move = l.destPath
			}
		}
		out = append(out, f)
	}
	return out
}

// cannotExpress refuses a patch that slim could apply itself but cannot hand
// on: no rendering makes the host's own apply step write the intended text.
func cannotExpress(abs, reason string) error {
	return verifyErr("Cannot express this patch so that the host writes the intended text in %s: %s", abs, reason)
}

// handOn decides the patch to hand on. It returns nil text when the input
// can be handed on byte for byte.
func (w *world) handOn(input []byte, r *resolution, rewrite bool) (*string, bool, error) {
	// What no rendering can fix: the host always ends an edited file with a
	// newline and splits lines on LF only.
	for _, l := range r.lineages {
		if l.origin == "" || l.dest == "" {
			continue
		}
		for _, t := range l.base.terms {
			if t == eolCR {
				return nil, false, cannotExpress(l.srcAbs, "the file ends its lines with a lone CR, which the host does not treat as a line break; use slim rescue --apply")
			}
		}
		if l.base.noFinal && len(l.cur.lines) > 0 {
			return nil, false, cannotExpress(l.srcAbs, "the file does not end with a newline and the host always adds one; use slim rescue --apply to keep the file as it is")
		}
		if n := len(l.cur.lines); n > 0 && l.cur.lines[n-1] == "" && l.cur.terms[n-1] == eolLF {
			return nil, false, cannotExpress(l.srcAbs, "the file would end with a blank line, which the host drops when it rewrites a file; use slim rescue --apply")
		}
	}
	if !rewrite {
		if bad, _ := w.hostCheck(string(input), r); len(bad) == 0 {
			return nil, false, nil
		}
	}
	level := map[*lineage]int{}
	byKey := map[string][]*lineage{}
	for _, l := range r.lineages {
		level[l] = 1
		for _, k := range []string{l.origin, l.dest} {
			if k != "" {
				byKey[k] = append(byKey[k], l)
			}
		}
	}
	for round := 0; round < 2*maxLevel*len(r.lineages)+2; round++ {
		text, hostEOL := renderPatch(r, level)
		failing, reason := w.verifyRendered(text, r)
		if len(failing) == 0 {
			return &text, hostEOL, nil
		}
		for _, key := range failing {
			ls := byKey[key]
			bumped := false
			for _, l := range ls {
				if l.origin != "" && l.dest != "" && level[l] < maxLevel {
					level[l]++
					bumped = true
				}
			}
			if !bumped {
				abs := r.abs[key]
				if abs == "" {
					abs = key
				}
				return nil, false, cannotExpress(abs, reason[key])
			}
		}
	}
	return nil, false, cannotExpress(w.dir, "no rendering passed the checks")
}

// verifyRendered re-parses and re-resolves a rendered patch, which must give
// every file the same final text as the patch it stands for, and runs the
// host model on it. It returns the slot keys whose
// result differs, with a reason for each.
func (w *world) verifyRendered(text string, want *resolution) ([]string, map[string]string) {
	var f failures
	fail := f.add
	all := func(why string) ([]string, map[string]string) {
		for _, k := range want.touched {
			fail(k, why)
		}
		return f.keys, f.why
	}
	p, err := patch.Parse([]byte(text))
	if err != nil {
		return all("the rewritten patch does not parse: " + err.Error())
	}
	got, failKey, err := w.resolve(p)
	if err != nil {
		if failKey != "" {
			fail(failKey, "the rewritten patch does not resolve: "+message(err))
			return f.keys, f.why
		}
		return all("the rewritten patch does not resolve: " + message(err))
	}
	for _, k := range want.touched {
		if !sameFinal(want, got, k) {
			fail(k, "the rewritten patch gives a different text")
		}
	}
	bad, why := w.hostCheck(text, want)
	for _, k := range bad {
		fail(k, why[k])
	}
	return f.keys, f.why
}

// failures collects the failing slot keys in order, each with the first
// reason given for it.
type failures struct {
	keys []string
	why  map[string]string
}

func (f *failures) add(key, why string) {
	if _, ok := f.why[key]; ok {
		return
	}
	if f.why == nil {
		f.why = map[string]string{}
	}
	f.keys = append(f.keys, key)
	f.why[key] = why
}

func sameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// hostCheck runs the host model on text and compares its result with the
// final texts of r. It returns the differing slot keys and reasons; an empty
// list means the host writes exactly slim's bytes.
func (w *world) hostCheck(text string, r *resolution) ([]string, map[string]string) {
	var f failures
	fail := f.add
	keyOf := func(abs string) string {
		v := w.check(abs)
		if !v.Inside {
			return abs
		}
		k, err := w.key(v)
		if err != nil {
			return abs
		}
		return k
	}
	read := func(abs string) hostmodel.File {
		s := w.snaps[keyOf(abs)]
		if s == nil {
			return hostmodel.File{}
		}
		hf := hostmodel.File{Data: s.data, Exists: s.exists || s.other, Dir: s.other}
		if s.text != nil {
			hf.Text = s.text.raw
		}
		return hf
	}
	want := func(abs string) []byte {
		k := keyOf(abs)
		if _, ok := r.abs[k]; !ok {
			return nil
		}
		return r.final(k)
	}
	hr, err := hostmodel.Apply(text, w.dir, w.flavor, read, want)
	if err != nil {
		var he *hostmodel.Error
		why := "the host would fail: " + err.Error()
		if errors.As(err, &he) && he.Path != "" {
			fail(keyOf(he.Path), why)
			return f.keys, f.why
		}
		for _, k := range r.touched {
			fail(k, why)
		}
		if len(f.keys) == 0 {
			fail(w.dir, why)
		}
		return f.keys, f.why
	}
	got := map[string][]byte{}
	wrote := map[string]bool{}
	for _, p := range hr.Paths {
		k := keyOf(p)
		got[k] = hr.Finals[p]
		wrote[k] = true
	}
	for _, k := range r.touched {
		want := r.final(k)
		var have []byte
		if wrote[k] {
			have = got[k]
		} else if s := w.snaps[k]; s != nil && s.exists {
			have = s.data
		}
		if !sameBytes(want, have) {
			fail(k, "the host would write different bytes"+firstDiff(want, have))
		}
	}
	for k := range wrote {
		if _, ok := r.abs[k]; !ok {
			fail(k, "the host would write a file slim does not")
		}
	}
	return f.keys, f.why
}

// firstDiff describes where two texts first differ.
func firstDiff(want, have []byte) string {
	switch {
	case want == nil && have != nil:
		return " (the file would remain)"
	case want != nil && have == nil:
		return " (the file would be missing)"
	}
	n := 0
	for n < len(want) && n < len(have) && want[n] == have[n] {
		n++
	}
	line := bytes.Count(want[:n], []byte("\n")) + 1
	return fmt.Sprintf(" (first difference at line %d)", line)
}
