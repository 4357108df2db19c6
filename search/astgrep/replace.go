package astgrep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slimgate/slim/internal/safefs"
	"github.com/slimgate/slim/worktree"
)

// MaxFileSize is the largest file Replace rewrites.
const MaxFileSize = 128 << 20

// ReplaceOptions are a Query and what to put in place of each match.
type ReplaceOptions struct {
	Query
	// Rewrite is the replacement, with the pattern's metavariables; ""
	// deletes each match.
	Rewrite string
	// Apply writes the files (every one or none); otherwise Replace only
	// reports the changes and their diff.
	Apply bool
	// AllowNested lets files inside nested worktrees, submodules and
	// nested repositories be rewritten.
	AllowNested bool
	// Approved, when not nil, lists the only files (relative to Dir, or
	// absolute) that Apply may change: the files a person approved after a
	// dry run. A change to any other file refuses the whole replace.
	Approved []string

	// afterRun runs after ast-grep answered and before any file is read;
	// beforeStep runs before each file is written. Tests use them to change
	// files at the worst moment.
	afterRun   func()
	beforeStep func(int)
}

// Edit is one replacement in a file.
type Edit struct {
	Line        int    `json:"line"` // 1-based, where the match starts
	Column      int    `json:"column"`
	Original    string `json:"original"`
	Replacement string `json:"replacement"`
}

// FileChange is one file a replace rewrites.
type FileChange struct {
	// Path is the file as ast-grep reported it (relative to Dir for a
	// relative search path); Abs is its physical path.
	Path  string `json:"path"`
	Abs   string `json:"abs"`
	Edits []Edit `json:"edits"`
	// EOL, FinalNewline and BOM describe the file, which keeps all three.
	EOL          string `json:"eol"`
	FinalNewline bool   `json:"finalNewline"`
	BOM          bool   `json:"bom"`
}

// ReplaceResult is what Replace found and, with Apply, wrote.
type ReplaceResult struct {
	// Files lists the files whose text changes, in ast-grep's order.
	Files []FileChange `json:"files"`
	// Total counts the replacements that change a file; Overlapping the
	// matches left out because they lie inside another one (run again to
	// rewrite those).
	Total       int `json:"total"`
	Overlapping int `json:"overlapping,omitempty"`
	// Applied is set once every file was written.
	Applied bool `json:"applied"`
	// Truncated and TruncatedBy say that ast-grep's answer was partial (a
	// dry run only: Apply refuses a partial answer).
	Truncated   bool     `json:"truncated"`
	TruncatedBy []string `json:"truncatedBy,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Hints       []string `json:"hints,omitempty"`
	// Diff is the unified diff of the changes.
	Diff string `json:"diff,omitempty"`
	// Output is the text form (FormatReplace).
	Output string `json:"output"`
}

// Replace runs one structural replace. Every path and glob root is checked
// against the worktree guard before ast-grep runs; ast-grep only reports
// the rewrites (it never writes); every file it reports must lie inside
// the guard, or nothing happens. Each file's new text is built from the
// reported byte ranges and its line endings, final newline and byte order
// mark are kept. With Apply the files are written through the transactional
// writer: compared with what was read just before each write, every parent
// directory verified by identity, and every file restored when any step
// fails or ctx ends.
func Replace(ctx context.Context, opts ReplaceOptions) (*ReplaceResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	q := opts.Query
	if err := q.validate(); err != nil {
		return nil, err
	}
	lim := q.Limits.withDefaults()
	g, err := newGuard(q.Dir, opts.AllowNested)
	if err != nil {
		return nil, err
	}
	if err := checkScope(g, q); err != nil {
		return nil, err
	}
	if err := q.checkPaths("ast_grep_replace"); err != nil {
		return nil, err
	}
	tree, err := openTree(g)
	if err != nil {
		return nil, err
	}
	defer tree.Close()

	args := []string{"run", "-p", q.Pattern, "--lang", q.Lang, "-r", opts.Rewrite, "--json=compact"}
	args = append(args, q.globArgs()...)
	args = append(args, "--")
	args = append(args, q.paths()...)
	rr := runTool(ctx, q.Binary, q.Dir, args, q.Env, lim)
	raws, warnings, err := interpret("ast_grep_replace", rr)
	if err != nil {
		return nil, err
	}
	res := &ReplaceResult{Files: []FileChange{}, Warnings: warnings}
	res.TruncatedBy = cutReasons(rr, false)
	res.Truncated = len(res.TruncatedBy) > 0
	if res.Truncated && opts.Apply {
		why := "its output passed the size limit"
		if rr.timedOut {
			why = "it ran into the time limit"
		}
		return nil, newErr(Verification, CodeTooLarge,
			fmt.Sprintf("ast_grep_replace failed: ast-grep's answer was cut short (%s), so not every rewrite is known; nothing was written. Narrow the paths or globs and run the replace in parts.", why), nil)
	}
	if opts.afterRun != nil {
		opts.afterRun()
	}

	files, err := planFiles(g, q.Dir, raws)
	if err != nil {
		return nil, err
	}
	var changes []safefs.Change
	var abs []string
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, newErr(Internal, CodeInterrupted, "ast_grep_replace: interrupted before anything was written", err)
		}
		old, err := readFile(tree, g, f)
		if err != nil {
			return nil, err
		}
		fc, data, spans, skipped, err := rewriteFile(f, old.Data)
		if err != nil {
			return nil, err
		}
		res.Overlapping += skipped
		if bytes.Equal(data, old.Data) {
			continue
		}
		res.Total += len(fc.Edits)
		res.Files = append(res.Files, fc)
		res.Diff += fileDiff(f.display, old.Data, data, spans)
		changes = append(changes, safefs.Change{Rel: f.rel, Data: data, Old: old})
		abs = append(abs, f.abs)
	}
	if res.Total == 0 && len(raws) == 0 {
		res.Hints = PatternHints(q.Pattern, q.Lang)
	}
	if opts.Apply && len(changes) > 0 {
		if opts.Approved != nil {
			if err := checkApproved(g, q.Dir, opts.Approved, changes, abs); err != nil {
				return nil, err
			}
		}
		if err := apply(ctx, tree, g, changes, abs, opts.beforeStep); err != nil {
			return nil, err
		}
		res.Applied = true
	}
	res.Output = FormatReplace(res, lim)
	return res, nil
}

// newGuard builds the worktree guard of dir the way `slim rescue` does: the
// worktree and git dirs come from resolving dir, and the git dirs stay
// refused for writes.
func newGuard(dir string, allowNested bool) (*worktree.Guard, error) {
	g, err := worktree.NewSessionGuard(dir, "", false, worktree.Options{AllowNested: allowNested})
	if err != nil {
		return nil, newErr(Usage, CodeUsage, fmt.Sprintf("ast_grep_replace: cannot use %s as the project directory: %v", dir, err), err)
	}
	return g, nil
}

// openTree opens the guard's top once, as the check saw it, refusing the
// git dirs and (unless allowed) nested repositories below the session.
func openTree(g *worktree.Guard) (*safefs.Tree, error) {
	t, err := g.OpenTree()
	if err != nil {
		var fe *safefs.Error
		switch {
		case errors.As(err, &fe) && fe.Reason == safefs.Denied:
			return nil, newErr(Blocked, CodeGitDir, "ast_grep_replace blocked: the project directory is the repository's git directory, which is refused for writes", err)
		case errors.As(err, &fe) && fe.Reason == safefs.Changed:
			return nil, newErr(Blocked, CodePathChanged, "ast_grep_replace blocked: the workspace root "+g.Top()+" changed while slim was checking it; nothing was written", err)
		}
		return nil, newErr(Internal, CodeInternal, fmt.Sprintf("ast_grep_replace: cannot open the workspace root %s: %v", g.Top(), err), err)
	}
	return t, nil
}

// checkScope refuses, before ast-grep runs, a path or glob root that lies
// outside the guard's area: a glob cannot widen the search beyond its
// paths, but one that names a place outside says what the caller meant.
func checkScope(g *worktree.Guard, q Query) error {
	for _, p := range q.paths() {
		if v := g.Check(p); !v.Inside {
			return blockedPath(v, fmt.Sprintf("the path %q", p))
		}
	}
	for _, glob := range q.Globs {
		pat := strings.TrimPrefix(glob, "!")
		for _, c := range strings.FieldsFunc(pat, isSep) {
			if c == ".." {
				return newErr(Blocked, CodeOutside, fmt.Sprintf("ast_grep_replace blocked: the glob %q climbs out with \"..\"; globs match below the search paths, so write them relative to a path inside the workspace. Nothing was run or written.", glob), nil)
			}
		}
		root := globRoot(pat)
		if root == "" {
			continue
		}
		if v := g.Check(root); !v.Inside {
			return blockedPath(v, fmt.Sprintf("the glob %q", glob))
		}
	}
	return nil
}

func isSep(r rune) bool { return r == '/' || r == filepath.Separator }

// globRoot is the literal directory a glob starts in: its leading
// components without glob characters ("src/**/*.ts" gives "src", "*.go"
// gives ""). An absolute glob keeps its leading separator.
func globRoot(glob string) string {
	comps := strings.Split(filepath.ToSlash(glob), "/")
	var lit []string
	for i, c := range comps {
		if strings.ContainsAny(c, "*?[{\\") || i == len(comps)-1 {
			break
		}
		lit = append(lit, c)
	}
	root := strings.Join(lit, "/")
	if root == "" && strings.HasPrefix(filepath.ToSlash(glob), "/") {
		return "/"
	}
	return filepath.FromSlash(root)
}

func blockedPath(v worktree.Verdict, what string) error {
	kind := Blocked
	if v.Code == worktree.CodeInvalidPath {
		kind = Validation
	}
	where := v.Physical
	if where == "" {
		where = v.Abs
	}
	return newErr(kind, v.Code, fmt.Sprintf("ast_grep_replace blocked: %s (%s) is not inside the workspace: %s. Nothing was run or written.", what, where, v.Reason), nil)
}

// plannedFile is one file ast-grep reported, with its matches.
type plannedFile struct {
	display string // as ast-grep reported it
	abs     string // physical
	rel     string // physical, relative to the guard's top
	matches []rawMatch
}

// planFiles groups ast-grep's matches by file and checks every file
// against the guard; one file outside refuses the whole replace. Two
// spellings of one file (a link inside the area) are merged.
func planFiles(g *worktree.Guard, dir string, raws []rawMatch) ([]*plannedFile, error) {
	var order []*plannedFile
	byRel := map[string]*plannedFile{}
	verdicts := map[string]*plannedFile{}
	for _, m := range raws {
		if f, ok := verdicts[m.File]; ok {
			f.matches = append(f.matches, m)
			continue
		}
		p := m.File
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		v := g.Check(p)
		if !v.Inside {
			return nil, newErr(Blocked, v.Code, fmt.Sprintf("ast_grep_replace blocked: ast-grep reported a match in %s, which is not inside the workspace: %s. Nothing was written; narrow the paths or globs to files inside.", v.Physical, v.Reason), nil)
		}
		rel, err := g.RelToTop(v)
		if err != nil {
			return nil, newErr(Blocked, CodeOutside, fmt.Sprintf("ast_grep_replace blocked: %s lies outside the worktree that slim writes through: %v. Nothing was written.", v.Physical, err), err)
		}
		f, ok := byRel[rel]
		if !ok {
			f = &plannedFile{display: m.File, abs: v.Physical, rel: rel}
			byRel[rel] = f
			order = append(order, f)
		}
		verdicts[m.File] = f
		f.matches = append(f.matches, m)
	}
	return order, nil
}

// readFile reads f through the tree's handles, so what is rewritten is the
// file the guard classified.
func readFile(t *safefs.Tree, g *worktree.Guard, f *plannedFile) (*safefs.File, error) {
	file, other, err := t.ReadFile(f.rel, MaxFileSize)
	switch {
	case err != nil:
		return nil, treeErr(g, f.abs, err)
	case other != nil:
		return nil, newErr(Verification, CodeFileChanged, fmt.Sprintf("ast_grep_replace failed: %s is not a regular file; nothing was written", f.abs), nil)
	case file == nil:
		return nil, changedErr(f.abs, "disappeared")
	}
	return file, nil
}

func changedErr(abs, what string) error {
	return newErr(Verification, CodeFileChanged, fmt.Sprintf("ast_grep_replace failed: %s %s since ast-grep read it; nothing was written. Run the replace again.", abs, what), nil)
}

// treeErr turns a refusal of the tree into the error the caller reads.
func treeErr(g *worktree.Guard, abs string, err error) error {
	var fe *safefs.Error
	if !errors.As(err, &fe) {
		return newErr(Internal, CodeInternal, fmt.Sprintf("ast_grep_replace: cannot read %s: %v", abs, err), err)
	}
	at := filepath.Join(g.Top(), fe.Rel)
	switch fe.Reason {
	case safefs.TooLarge:
		return newErr(Validation, CodeTooLarge, fmt.Sprintf("ast_grep_replace failed: %s is larger than %d MiB, the largest file slim rewrites; nothing was written", abs, MaxFileSize>>20), err)
	case safefs.Denied:
		return newErr(Blocked, CodeGitDir, "ast_grep_replace blocked: a match lies inside the git directory: "+abs, err)
	case safefs.Nested:
		return newErr(Blocked, CodeNested, fmt.Sprintf("ast_grep_replace blocked: a match lies inside the nested repository %s: %s", at, abs), err)
	case safefs.NotDir:
		return changedErr(abs, "changed (a directory on its way is now a file)")
	}
	return newErr(Blocked, CodePathChanged, fmt.Sprintf("ast_grep_replace blocked: %s, on the way to %s, changed after slim checked it (it %s), so slim did not write through it; no file was changed", at, abs, fe.Reason), err)
}

// span is one replacement as byte offsets into the file.
type span struct {
	start, end int
	repl       string
	m          rawMatch
}

// rewriteFile builds f's new text from its matches over data. Each match
// must still read as ast-grep saw it; a match inside an earlier one is
// left out (counted in skipped), as ast-grep itself does when it writes.
func rewriteFile(f *plannedFile, data []byte) (FileChange, []byte, []span, int, error) {
	st := styleOf(data)
	fc := FileChange{Path: f.display, Abs: f.abs, Edits: []Edit{}, EOL: st.eol, FinalNewline: st.final, BOM: st.bom > 0}
	var spans []span
	for _, m := range f.matches {
		if m.Replacement == nil {
			return fc, nil, nil, 0, newErr(Internal, CodeToolError, "ast_grep_replace: ast-grep reported a match without a replacement in "+f.abs, nil)
		}
		r := m.Range.ByteOffset
		if r.Start < 0 || r.End < r.Start || r.End > len(data) || string(data[r.Start:r.End]) != m.Text {
			return fc, nil, nil, 0, changedErr(f.abs, "changed")
		}
		s := span{start: r.Start, end: r.End, repl: *m.Replacement, m: m}
		if o := m.ReplacementOffsets; o != nil {
			if o.Start < 0 || o.End < o.Start || o.End > len(data) {
				return fc, nil, nil, 0, changedErr(f.abs, "changed")
			}
			s.start, s.end = o.Start, o.End
		}
		if s.start < st.bom {
			return fc, nil, nil, 0, newErr(Internal, CodeToolError, "ast_grep_replace: ast-grep reported a replacement over the byte order mark of "+f.abs+"; nothing was written", nil)
		}
		spans = append(spans, s)
	}
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var kept []span
	skipped := 0
	last := -1
	for _, s := range spans {
		if s.start < last || (len(kept) > 0 && s.start == kept[len(kept)-1].start) {
			skipped++
			continue
		}
		kept = append(kept, s)
		last = s.end
	}
	var out bytes.Buffer
	out.Grow(len(data))
	pos := 0
	for i := range kept {
		s := &kept[i]
		repl := st.adapt(s.repl)
		s.repl = repl
		out.Write(data[pos:s.start])
		out.WriteString(repl)
		pos = s.end
		if repl != string(data[s.start:s.end]) {
			fc.Edits = append(fc.Edits, Edit{
				Line: s.m.Range.Start.Line + 1, Column: s.m.Range.Start.Column + 1,
				Original: string(data[s.start:s.end]), Replacement: repl,
			})
		}
	}
	out.Write(data[pos:])
	nd := out.Bytes()
	// Keep the file's final-newline state: a rewrite at the very end may
	// drop the last line break or add one the file did not have.
	if len(kept) > 0 && len(nd) > st.bom {
		has, n := endsWithBreak(nd)
		switch {
		case st.final && !has:
			nd = append(nd, st.terminator()...)
		case !st.final && has && kept[len(kept)-1].end == len(data):
			nd = nd[:len(nd)-n]
		}
	}
	return fc, nd, kept, skipped, nil
}

// checkApproved refuses a write that would change a file outside the
// approved list.
func checkApproved(g *worktree.Guard, dir string, approved []string, changes []safefs.Change, abs []string) error {
	ok := map[string]bool{}
	for _, a := range approved {
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if v := g.Check(p); v.Inside {
			if rel, err := g.RelToTop(v); err == nil {
				ok[rel] = true
			}
		}
	}
	for i, c := range changes {
		if !ok[c.Rel] {
			return newErr(Verification, CodeNotApproved, fmt.Sprintf("ast_grep_replace failed: the replace would now also change %s, which was not among the approved files (the files changed since the dry run); nothing was written. Run the dry run again.", abs[i]), nil)
		}
	}
	return nil
}

// apply writes changes, all or none, and words the writer's errors.
func apply(ctx context.Context, t *safefs.Tree, g *worktree.Guard, changes []safefs.Change, abs []string, beforeStep func(int)) error {
	err := t.Apply(changes, safefs.ApplyOptions{Context: ctx, BeforeStep: beforeStep})
	if err == nil {
		return nil
	}
	name := func(rel string) string {
		for i, c := range changes {
			if c.Rel == rel {
				return abs[i]
			}
		}
		return filepath.Join(g.Top(), rel)
	}
	var ce *safefs.ConflictError
	var we *safefs.WriteError
	var fe *safefs.Error
	switch {
	case errors.As(err, &we) && len(we.Incomplete) > 0:
		// Whatever stopped the replace, the caller must hear first that
		// not every file is as it was.
		return newErr(Internal, CodeInternal, fmt.Sprintf("ast_grep_replace: could not write %s: %v; the rollback was incomplete, so these files are not as they were: %s", name(we.Rel), we.Err, strings.Join(we.Incomplete, "; ")), err)
	case errors.As(err, &ce):
		return changedErr(name(ce.Rel), ce.What)
	case errors.As(err, &we):
		// The rollback was complete: the case above took the others.
		if cerr := ctx.Err(); cerr != nil && errors.Is(we.Err, cerr) {
			return newErr(Internal, CodeInterrupted, fmt.Sprintf("ast_grep_replace: interrupted before %s was written; every file was restored", name(we.Rel)), err)
		}
		if errors.As(we.Err, &fe) {
			return treeErr(g, name(we.Rel), fe)
		}
		return newErr(Internal, CodeInternal, fmt.Sprintf("ast_grep_replace: could not write %s: %v; every file was restored", name(we.Rel), we.Err), err)
	case errors.As(err, &fe):
		return treeErr(g, name(fe.Rel), fe)
	}
	return newErr(Internal, CodeInternal, fmt.Sprintf("ast_grep_replace: could not write the files: %v", err), err)
}
