package rescue

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slimgate/slim/internal/slimerr"
)

// This file is apply mode (DECISIONS rescue 10, ERRATA 25): every file is
// written or none. Each write is compare-and-swap against the bytes read,
// goes to a temporary sibling that is fsynced and renamed over the target
// through an os.Root opened on the physical top of the allowed area, and
// any failure restores what was already changed and removes the
// directories slim created. After a SIGKILL each file is old or new; a
// temporary sibling may remain.

// change is one slot to write or remove.
type change struct {
	abs    string // physical path
	rel    string // path inside the root
	data   []byte // nil: remove
	mode   fs.FileMode
	isNew  bool // created by this patch: 0666 less the umask
	before *snapshot
}

// plan lists the changes of r in first-touch order.
func (w *world) plan(r *resolution) ([]*change, error) {
	modeOf := map[string]*lineage{}
	for _, l := range r.lineages {
		if l.dest != "" {
			modeOf[l.dest] = l
		}
	}
	var out []*change
	for _, key := range r.touched {
		s := w.snaps[key]
		final := r.final(key)
		if s == nil {
			return nil, internalErr(nil, "no snapshot for %s", key)
		}
		if final == nil && !s.exists {
			continue
		}
		l := modeOf[key]
		c := &change{abs: key, data: final, before: s}
		if final != nil {
			if l != nil && l.origin != "" {
				c.mode = l.mode
			} else {
				c.isNew = true
			}
			if s.exists && bytes.Equal(final, s.data) && (c.isNew || c.mode == s.mode) {
				continue // nothing changes
			}
		}
		// The guard's Rel, not a lexical Rel of the physical path: a target
		// may lie below the top by file identity while spelt another way
		// (a case variant, a bind mount), where filepath.Rel gives "../".
		v, ok := w.keyVerdicts[key]
		rel, err := w.guard.RelToTop(v)
		if !ok || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return nil, &slimerr.Error{Kind: slimerr.Blocked, Code: slimerr.CodeOutsideWorkspace,
				Message: "apply_patch blocked: patch contains path outside workspace root: " + key}
		}
		c.rel = rel
		out = append(out, c)
	}
	return out, nil
}

// apply writes the changes of r, all or none.
func (w *world) apply(r *resolution) error {
	changes, err := w.plan(r)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return nil
	}
	// The root is opened on the physical top of the allowed area.
	top := w.guard.Top()
	root, err := os.OpenRoot(top)
	if err != nil {
		return internalErr(err, "cannot open the workspace root %s: %v", top, err)
	}
	defer root.Close()

	// Compare-and-swap, first pass: nothing is written if any file changed
	// since it was read.
	for _, c := range changes {
		if err := casCheck(root, c); err != nil {
			return err
		}
	}
	tx := &txn{root: root}
	// Writes first, removals last, so a Move never loses its content.
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].data != nil && changes[j].data == nil })
	for _, c := range changes {
		if err := tx.do(c); err != nil {
			issues := tx.rollback()
			msg := fmt.Sprintf("could not write %s: %v; ", c.abs, err)
			if len(issues) == 0 {
				msg += "every file was restored"
			} else {
				msg += "the rollback was incomplete: " + strings.Join(issues, "; ")
			}
			if se := new(slimerr.Error); errors.As(err, &se) {
				if len(issues) == 0 {
					return err
				}
			}
			return internalErr(err, "%s", msg)
		}
	}
	tx.syncDirs()
	return nil
}

// casCheck fails when the file on disk is not the snapshot any more.
func casCheck(root *os.Root, c *change) error {
	fi, err := root.Lstat(c.rel)
	switch {
	case err == nil && c.before.exists:
		if !fi.Mode().IsRegular() {
			return verifyErr("File changed since it was read: %s", c.abs)
		}
		data, err := root.ReadFile(c.rel)
		if err != nil {
			return internalErr(err, "Failed to read file for patch verification: %s", c.abs)
		}
		if !bytes.Equal(data, c.before.data) {
			return verifyErr("File changed since it was read: %s", c.abs)
		}
	case err == nil:
		return verifyErr("File appeared since the patch was checked: %s", c.abs)
	case errors.Is(err, fs.ErrNotExist):
		if c.before.exists {
			return verifyErr("File disappeared since it was read: %s", c.abs)
		}
	default:
		if !c.before.exists && isNotDir(err) {
			return nil
		}
		return internalErr(err, "Failed to stat file for patch verification: %s", c.abs)
	}
	return nil
}

// txn records what was done, to undo it.
type txn struct {
	root    *os.Root
	done    []*change
	created []string // directories created, outermost first
	dirs    map[string]bool
}

func tmpName(rel string) string {
	dir, base := filepath.Split(rel)
	if len(base) > 64 { // keep the name well below NAME_MAX
		base = base[:64]
	}
	return filepath.Join(dir, fmt.Sprintf(".%s.slim-%012x.tmp", base, rand.Uint64()&(1<<48-1)))
}

func (t *txn) touchDir(rel string) {
	if t.dirs == nil {
		t.dirs = map[string]bool{}
	}
	t.dirs[filepath.Dir(rel)] = true
}

// mkdirs creates the missing parents of rel, recording them.
func (t *txn) mkdirs(rel string) error {
	dir := filepath.Dir(rel)
	var missing []string
	for d := dir; d != "." && d != string(filepath.Separator); d = filepath.Dir(d) {
		if _, err := t.root.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := t.root.Mkdir(missing[i], 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		t.created = append(t.created, missing[i])
	}
	return nil
}

// writeFile replaces rel with data through a synced temporary sibling.
func (t *txn) writeFile(rel string, data []byte, mode fs.FileMode, chmod bool, check func() error) error {
	tmp := tmpName(rel)
	f, err := t.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			t.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if chmod {
		if err := f.Chmod(mode); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	if err := t.root.Rename(tmp, rel); err != nil {
		return err
	}
	ok = true
	t.touchDir(rel)
	return nil
}

func (t *txn) do(c *change) error {
	check := func() error { return casCheck(t.root, c) }
	if c.data == nil {
		if err := check(); err != nil {
			return err
		}
		if err := t.root.Remove(c.rel); err != nil {
			return err
		}
		t.done = append(t.done, c)
		t.touchDir(c.rel)
		return nil
	}
	if err := t.mkdirs(c.rel); err != nil {
		return err
	}
	if err := t.writeFile(c.rel, c.data, c.mode, !c.isNew, check); err != nil {
		return err
	}
	t.done = append(t.done, c)
	return nil
}

// rollback undoes every change done, newest first, and removes the
// directories created. It returns what it could not undo.
func (t *txn) rollback() []string {
	var issues []string
	for i := len(t.done) - 1; i >= 0; i-- {
		c := t.done[i]
		var err error
		if c.before.exists {
			err = t.writeFile(c.rel, c.before.data, c.before.mode, true, nil)
		} else {
			err = t.root.Remove(c.rel)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			issues = append(issues, fmt.Sprintf("%s: %v", c.abs, err))
		}
	}
	for i := len(t.created) - 1; i >= 0; i-- {
		if err := t.root.Remove(t.created[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			issues = append(issues, fmt.Sprintf("%s: %v", t.created[i], err))
		}
	}
	t.syncDirs()
	return issues
}

// syncDirs makes renames and removals durable; errors are ignored, as some
// file systems cannot sync a directory.
func (t *txn) syncDirs() {
	for d := range t.dirs {
		if f, err := t.root.Open(d); err == nil {
			f.Sync()
			f.Close()
		}
	}
}
