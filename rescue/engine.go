package rescue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/internal/safefs"
	"github.com/slimgate/slim/rescue/internal/match"
	"github.com/slimgate/slim/rescue/internal/patch"
	"github.com/slimgate/slim/worktree"
	"github.com/slimgate/slim/worktree/hostpath"
)

// This file resolves a whole patch against the files: containment of every
// target, a snapshot of every file read, staging keyed by file identity,
// and the lineage of each file's content through Add, Update, Move and
// Delete, so that each file has exactly one final text, however many hunks
// and names (links, case variants) reach it.

// internalPrefix starts the message of every internal error.
const internalPrefix = "apply_patch internal error: "

func verifyErr(format string, args ...any) error {
	return &Error{Kind: Verification, Code: CodeVerificationFailed, Message: match.VerificationPrefix + fmt.Sprintf(format, args...)}
}

func internalErr(err error, format string, args ...any) error {
	return &Error{Kind: Internal, Code: CodeInternal, Message: internalPrefix + fmt.Sprintf(format, args...), Err: err}
}

// snapshot is one file as it was on disk when first read.
type snapshot struct {
	physical string
	exists   bool // exists as a regular file
	other    bool // exists but is not a regular file
	data     []byte
	info     fs.FileInfo // of the open file: identity, full mode, owner
	text     *fileText   // nil until parsed
	// parentFile names an ancestor that exists but is not a directory, so
	// the path can be neither read nor created.
	parentFile string
	textErr    error
}

// file is the snapshot as the transactional writer compares and keeps it.
func (s *snapshot) file() *safefs.File {
	if s == nil || !s.exists {
		return nil
	}
	return &safefs.File{Data: s.data, Info: s.info}
}

// world is the on-disk state the engine sees: containment verdicts and file
// snapshots, each taken once, so a re-resolution (re-verification, the host
// model) reads nothing again and apply compares against the same bytes.
type world struct {
	dir    string // the session directory as given (lexical)
	flavor hostpath.Flavor
	guard  *worktree.Guard
	// tree is the top of the allowed area, opened once before the first
	// check; every file below it is read and written through its handles.
	tree *safefs.Tree
	// ctx bounds the work; resolution checks it between hunks and chunks.
	ctx      context.Context
	verdicts map[string]worktree.Verdict
	snaps    map[string]*snapshot // by physical path
	// ids maps a physical path to its slot key: the first physical path
	// seen for the same file identity (hard links, case variants).
	ids map[string]string
	// keyVerdicts holds, for each slot key, the verdict of the path that
	// created it; apply locates the slot below the root with its Rel.
	keyVerdicts map[string]worktree.Verdict
	// views holds the index of each snapshot's text, built once and reused
	// by every resolution (the re-verification of a rendered patch places
	// its chunks in the same view).
	views map[*fileText]*match.FileView
}

func newWorld(ctx context.Context, dir string, flavor hostpath.Flavor, g *worktree.Guard, tree *safefs.Tree) *world {
	return &world{dir: dir, flavor: flavor, guard: g, tree: tree, ctx: ctx, verdicts: map[string]worktree.Verdict{}, snaps: map[string]*snapshot{}, ids: map[string]string{},
		keyVerdicts: map[string]worktree.Verdict{}, views: map[*fileText]*match.FileView{}}
}

// view returns the index of l's current text: cached for a snapshot's own
// text, built afresh for a text an earlier hunk produced.
func (w *world) view(l *lineage) *match.FileView {
	if l.cur != l.base || l.base == nil {
		return match.NewFileView(l.cur.lines, l.exactOnly)
	}
	v, ok := w.views[l.base]
	if !ok || v.ExactOnly() != l.exactOnly {
		v = match.NewFileView(l.base.lines, l.exactOnly)
		w.views[l.base] = v
	}
	return v
}

func (w *world) check(path string) worktree.Verdict {
	if v, ok := w.verdicts[path]; ok {
		return v
	}
	v := w.guard.Check(path)
	w.verdicts[path] = v
	return v
}

// snap returns the snapshot of an inside verdict's physical path, taking it
// on first use. Below the top it is read through the tree's handles, so it
// is the file the check classified; elsewhere (a session directory outside
// the worktree, which apply refuses) by path.
func (w *world) snap(v worktree.Verdict) (*snapshot, error) {
	physical := v.Physical
	if s, ok := w.snaps[physical]; ok {
		return s, nil
	}
	s := &snapshot{physical: physical}
	var err error
	if rel, rerr := w.guard.RelToTop(v); rerr == nil && w.tree != nil {
		err = w.snapTree(s, rel)
	} else {
		err = w.snapPath(s)
	}
	if err != nil {
		return nil, err
	}
	w.snaps[physical] = s
	return s, nil
}

// snapTree fills s from the file rel below the top.
func (w *world) snapTree(s *snapshot, rel string) error {
	f, other, err := w.tree.ReadFile(rel, MaxFileSize)
	if fe := new(safefs.Error); errors.As(err, &fe) && fe.Reason == safefs.NotDir {
		s.parentFile = filepath.Join(w.guard.Top(), fe.Rel)
		return nil
	}
	switch {
	case err != nil:
		return w.treeErr(s.physical, err)
	case other != nil:
		s.other, s.info = true, other
	case f != nil:
		s.exists, s.data, s.info = true, f.Data, f.Info
	}
	return nil
}

// snapPath fills s by path, bounded like snapTree.
func (w *world) snapPath(s *snapshot) error {
	fi, err := os.Stat(s.physical)
	switch {
	case err == nil && fi.Mode().IsRegular():
		data, fi, err := safefs.ReadPath(s.physical, MaxFileSize)
		if err != nil {
			return w.treeErr(s.physical, err)
		}
		s.exists, s.info, s.data = true, fi, data
	case err == nil:
		s.other, s.info = true, fi
	case errors.Is(err, fs.ErrNotExist):
	case isNotDir(err):
		s.parentFile = firstNonDir(s.physical)
	default:
		return internalErr(err, "Failed to stat file for patch verification: %s", s.physical)
	}
	return nil
}

// treeErr turns a refusal of the tree into the error the model reads.
func (w *world) treeErr(physical string, err error) error {
	fe := new(safefs.Error)
	if !errors.As(err, &fe) {
		return internalErr(err, "Failed to read file for patch verification: %s: %v", physical, err)
	}
	at := filepath.Join(w.guard.Top(), fe.Rel)
	switch fe.Reason {
	case safefs.NotDir:
		return verifyErr("Cannot create %s: %s is a file, not a directory", physical, at)
	case safefs.TooLarge:
		return tooLarge(physical, MaxFileSize)
	case safefs.Denied:
		return &Error{Kind: Blocked, Code: CodeGitDir, Err: err,
			Message: "apply_patch blocked: patch writes inside the git directory: " + physical}
	case safefs.Nested:
		return &Error{Kind: Blocked, Code: CodeNestedWorktree, Err: err,
			Message: "apply_patch blocked: patch contains path inside nested worktree " + at + ": " + physical}
	}
	return &Error{Kind: Blocked, Code: CodePathChanged, Err: err,
		Message: fmt.Sprintf("apply_patch blocked: %s, on the way to %s, changed after slim checked it (it %s), so slim did not write through it; no file was changed", at, physical, fe.Reason)}
}

// tooLarge refuses a target above the size limit before reading it whole.
func tooLarge(physical string, limit int64) error {
	return &Error{Kind: Validation, Code: CodeTooLarge,
		Message: fmt.Sprintf(patch.ValidationPrefix+"%s is larger than %d MiB, the largest file slim reads; edit it another way", physical, limit>>20)}
}

// key returns the slot key of an inside verdict's physical path: existing
// files are keyed by identity, new ones by their physical path.
func (w *world) key(v worktree.Verdict) (string, error) {
	physical := v.Physical
	if k, ok := w.ids[physical]; ok {
		return k, nil
	}
	s, err := w.snap(v)
	if err != nil {
		return "", err
	}
	k := physical
	if s.info != nil {
		for p, other := range w.ids {
			if p != other {
				continue
			}
			if o := w.snaps[p]; o != nil && o.info != nil && os.SameFile(o.info, s.info) {
				k = p
				break
			}
		}
	}
	w.ids[physical] = k
	if k == physical {
		w.keyVerdicts[k] = v
	}
	return k, nil
}

// text returns the parsed text of an existing snapshot.
func (s *snapshot) parsed() (*fileText, error) {
	if s.text == nil && s.textErr == nil {
		s.text, s.textErr = parseText(s.data)
	}
	return s.text, s.textErr
}

// lineage follows one file content through the patch: from its origin on
// disk (or an Add) to its final place (or its deletion).
type lineage struct {
	first   int    // index of the first hunk that touched it
	origin  string // slot key of the origin on disk; "" for an added file
	srcPath string // path as written (normalised) of the origin or the Add
	srcAbs  string
	base    *fileText // the origin's text (nil for an added file)
	// cur is the current text; dest the slot it occupies ("" when deleted).
	cur      *fileText
	dest     string
	destPath string // path as written of the destination
	destAbs  string
	// src is the origin's snapshot: a moved file keeps its mode and owner.
	src   *snapshot
	hunks int // hunks that touched it
	// For a lineage touched by exactly one Update: that hunk and its
	// placements, rendered chunk by chunk.
	update     *patch.Hunk
	placements []*match.Placement
	chunks     []*patch.Chunk
	// exactOnly is set above the size cap.
	exactOnly bool
}

// slotState is the staged state of one slot.
type slotState struct {
	exists bool
	lin    *lineage
}

// resolution is the outcome of resolving one patch.
type resolution struct {
	lineages []*lineage
	repairs  []patch.Repair
	chunks   []ChunkReport
	// finals maps each touched slot key to its final content (nil when
	// the slot ends absent).
	finals map[string][]byte
	// texts holds the final text of the touched slots a lineage ends in;
	// their bytes are rendered into finals only when asked for (final).
	texts   map[string]*fileText
	touched []string // slot keys in first-touch order
	abs     map[string]string
}

// final returns the final content of a touched slot (nil when it ends
// absent).
func (r *resolution) final(key string) []byte {
	if b, ok := r.finals[key]; ok {
		return b
	}
	t := r.texts[key]
	if t == nil {
		return nil
	}
	b := t.bytes()
	r.finals[key] = b
	return b
}

// sameFinal reports whether slot key ends with the same content in a and
// b. Texts with the same lines and terminators give the same bytes, which
// is cheap to see when they share the snapshot's line strings; otherwise
// the bytes are compared.
func sameFinal(a, b *resolution, key string) bool {
	if ta, tb := a.texts[key], b.texts[key]; ta != nil && tb != nil && ta.sameAs(tb) {
		return true
	}
	return sameBytes(a.final(key), b.final(key))
}

// target is one hunk path resolved.
type target struct {
	written string // normalised spelling for output
	abs     string // lexical absolute, for messages
	key     string
	snap    *snapshot
}

func newResolution() *resolution {
	return &resolution{finals: map[string][]byte{}, texts: map[string]*fileText{}, abs: map[string]string{}}
}

// resolve runs the hunks of p in order against w. On failure it also
// returns the slot key of the hunk that failed, when known.
func (w *world) resolve(p *patch.Patch) (*resolution, string, error) {
	failKey := ""
	r := newResolution()
	err := w.resolveHunks(p, r, &failKey)
	if err != nil {
		return nil, failKey, err
	}
	return r, failKey, nil
}

// partial resolves p and, on failure, also returns what was learnt so far
// (repairs and chunk reports), for the diagnostics of a refusal.
func (w *world) partial(p *patch.Patch) (*resolution, error) {
	failKey := ""
	r := newResolution()
	err := w.resolveHunks(p, r, &failKey)
	return r, err
}

func (w *world) resolveHunks(p *patch.Patch, r *resolution, failKey *string) error {
	states := map[string]*slotState{}
	get := func(t target) *slotState {
		if st, ok := states[t.key]; ok {
			return st
		}
		st := &slotState{exists: t.snap.exists || t.snap.other}
		states[t.key] = st
		r.touched = append(r.touched, t.key)
		r.abs[t.key] = t.abs
		return st
	}
	origin := func(idx int, t target, st *slotState, op string) (*lineage, error) {
		if !st.exists {
			return nil, verifyErr("Failed to read file to %s: %s", op, t.abs)
		}
		if st.lin != nil {
			return st.lin, nil
		}
		if t.snap.other {
			return nil, verifyErr("Failed to read file to %s: %s", op, t.abs)
		}
		txt, err := t.snap.parsed()
		if err != nil {
			return nil, verifyErr("Refusing binary or non-UTF-8 file: %s", t.abs)
		}
		l := &lineage{first: idx, origin: t.key, srcPath: t.written, srcAbs: t.abs, base: txt, cur: txt,
			dest: t.key, destPath: t.written, destAbs: t.abs, src: t.snap, exactOnly: len(t.snap.data) > maxRescueSize}
		st.lin = l
		r.lineages = append(r.lineages, l)
		return l, nil
	}
	chunkIndex := 0
	for idx, h := range p.Hunks {
		if err := budget(w.ctx); err != nil {
			return err
		}
		src, err := w.target(h.Path, r)
		if err != nil {
			return err
		}
		*failKey = src.key
		if src.written != h.Path {
			r.repairs = append(r.repairs, patch.Repair{Kind: patch.RepairAbsolutePath, Line: h.Line})
		}
		st := get(src)
		switch h.Kind {
		case patch.HunkAdd:
			if st.exists {
				return verifyErr("Add File target already exists: %s", src.abs)
			}
			if err := creatable(src); err != nil {
				return err
			}
			txt, err := parseText(textFromAdd(h.Add))
			if err != nil {
				return verifyErr("Refusing binary or non-UTF-8 file: %s", src.abs)
			}
			l := &lineage{first: idx, srcPath: src.written, srcAbs: src.abs, cur: txt, dest: src.key, destPath: src.written, destAbs: src.abs, hunks: 1}
			st.exists, st.lin = true, l
			r.lineages = append(r.lineages, l)
		case patch.HunkDelete:
			l, err := origin(idx, src, st, "delete")
			if err != nil {
				return err
			}
			if err := notLink(src, "delete"); err != nil {
				return err
			}
			l.hunks++
			if l.hunks > 1 {
				r.repairs = append(r.repairs, patch.Repair{Kind: patch.RepairSamePathMerged, Line: h.Line})
			}
			l.dest, l.cur = "", nil
			st.exists, st.lin = false, nil
		case patch.HunkUpdate:
			l, err := origin(idx, src, st, "update")
			if err != nil {
				return err
			}
			var dst target
			move := h.Move != ""
			if move {
				if err := notLink(src, "move"); err != nil {
					return err
				}
				dst, err = w.target(h.Move, r)
				if err != nil {
					return err
				}
				if dst.key != src.key {
					*failKey = dst.key
				}
				if dst.written != h.Move {
					r.repairs = append(r.repairs, patch.Repair{Kind: patch.RepairAbsolutePath, Line: h.Line + 1})
				}
				if dst.key == src.key {
					move = false
					r.repairs = append(r.repairs, patch.Repair{Kind: patch.RepairSelfMoveDropped, Line: h.Line + 1})
				} else if get(dst).exists {
					return verifyErr("Move destination already exists: %s", dst.abs)
				} else if err := creatable(dst); err != nil {
					return err
				}
			}
			view := w.view(l)
			var pls []*match.Placement
			var chs []*patch.Chunk
			cursor := 0
			for _, ch := range h.Chunks {
				if len(ch.Lines) == 0 {
					continue // an empty chunk changes nothing
				}
				if err := budget(w.ctx); err != nil {
					return err
				}
				pl, err := view.Place(ch, cursor, src.abs)
				if err != nil {
					*failKey = src.key
					var me *match.Error
					if errors.As(err, &me) && len(me.Candidates) > 0 {
						fc := ChunkReport{Index: chunkIndex, Path: src.written, Strategy: phaseStrategy(me.Phase), Line: me.Candidates[0], Candidates: me.Candidates}
						for _, l := range ch.Lines {
							if l.Op != patch.OpAdd {
								fc.OldCount++
							}
							if l.Op != patch.OpDelete {
								fc.NewCount++
							}
						}
						r.chunks = append(r.chunks, fc)
					}
					return err
				}
				if len(pls) > 0 && pl.Start < pls[len(pls)-1].End {
					return verifyErr("Overlapping patch chunks in %s", src.abs)
				}
				pls = append(pls, pl)
				chs = append(chs, ch)
				cursor = pl.Cursor
				r.repairs = append(r.repairs, pl.Repairs...)
				cr := chunkReport(chunkIndex, src.written, ch, pl)
				cr.rescued = chunkRescued(pl, ch, l.cur.lines)
				r.chunks = append(r.chunks, cr)
				chunkIndex++
			}
			l.hunks++
			if l.hunks == 1 {
				l.update, l.placements, l.chunks = h, pls, chs
			} else {
				r.repairs = append(r.repairs, patch.Repair{Kind: patch.RepairSamePathMerged, Line: h.Line})
			}
			l.cur = l.cur.applyPlacements(pls)
			if move {
				st.exists, st.lin = false, nil
				dstState := get(dst)
				dstState.exists, dstState.lin = true, l
				l.dest, l.destPath, l.destAbs = dst.key, dst.written, dst.abs
			}
		}
	}
	for _, key := range r.touched {
		st := states[key]
		if st.exists && st.lin != nil {
			r.texts[key] = st.lin.cur // rendered to bytes on first use
		} else if st.exists {
			s := w.snaps[key]
			r.finals[key] = s.data
		} else {
			r.finals[key] = nil
		}
	}
	return nil
}

// target resolves one hunk path: containment was checked before; here the
// path gets its slot key, snapshot and output spelling.
func (w *world) target(path string, r *resolution) (target, error) {
	v := w.check(path)
	if !v.Inside {
		return target{}, w.guard.BlockError("apply_patch", v)
	}
	key, err := w.key(v)
	if err != nil {
		return target{}, err
	}
	t := target{written: path, abs: v.Abs, key: key, snap: w.snaps[key]}
	if t.snap == nil {
		t.snap = w.snaps[v.Physical]
	}
	if w.flavor.Concrete().IsAbs(path) {
		rel := w.flavor.Concrete().Relative(w.dir, v.Abs)
		if w.flavor.Concrete() == hostpath.Win32 {
			rel = strings.ReplaceAll(rel, `\`, "/")
		}
		if rel == "" {
			rel = "."
		}
		t.written = rel
	}
	return t, nil
}

func chunkReport(index int, path string, ch *patch.Chunk, pl *match.Placement) ChunkReport {
	c := ChunkReport{Index: index, Path: path, Strategy: pl.Strategy, Line: pl.Start + 1,
		Score: pl.Score, Needed: pl.Needed, Candidates: pl.Candidates}
	for _, l := range ch.Lines {
		if l.Op != patch.OpAdd {
			c.OldCount++
		}
		if l.Op != patch.OpDelete {
			c.NewCount++
		}
	}
	for _, l := range pl.Lines {
		if l.Op == patch.OpDelete {
			c.DeletedLines++
		}
	}
	if c.Candidates == nil {
		c.Candidates = []int{}
	}
	return c
}

// phaseStrategy names the strategy of a refused candidate list.
func phaseStrategy(phase string) string {
	switch phase {
	case match.PhasePrefixSuffix:
		return match.StrategyPrefixSuffix
	case match.PhaseLCS:
		return match.StrategyLCS
	case match.PhaseAnchor:
		return match.StrategyAnchor
	}
	return match.StrategyExact
}

// firstNonDir returns the first ancestor of p that exists and is not a
// directory.
func firstNonDir(p string) string {
	var chain []string
	for d := filepath.Dir(p); d != filepath.Dir(d); d = filepath.Dir(d) {
		chain = append(chain, d)
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if fi, err := os.Stat(chain[i]); err == nil && !fi.IsDir() {
			return chain[i]
		}
	}
	return filepath.Dir(p)
}

// creatable refuses a new file below a path that is not a directory: the
// host would fail on it after writing the files before it.
func creatable(t target) error {
	if t.snap.parentFile != "" {
		return verifyErr("Cannot create %s: %s is a file, not a directory", t.abs, t.snap.parentFile)
	}
	return nil
}

// notLink refuses to delete or move a path that is itself a symbolic link:
// the host would remove the link while slim's model (which follows links to
// the file) would remove the file it points to.
func notLink(t target, op string) error {
	if fi, err := os.Lstat(t.abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return verifyErr("Refusing to %s %s: it is a symbolic link; change the link itself outside the patch", op, t.abs)
	}
	return nil
}
