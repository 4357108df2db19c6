package safefs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is a regular file as a check read it through a Tree.
type File struct {
	Data []byte
	Info fs.FileInfo // from the open handle: identity, mode, owner
}

// Change is one file to write or remove below the top.
type Change struct {
	Rel  string // the file, relative to the top, physical (no links)
	Data []byte // the new content; nil removes the file
	// Old is the file as the check read it; nil means it did not exist and
	// must still not exist.
	Old *File
	// Like gives a new file the mode and owner of another (the source of a
	// move); nil creates it with mode 0666 less the umask.
	Like *File
}

// ConflictError reports a file that is not what the check read any more:
// the write is refused before anything is changed (or rolled back).
type ConflictError struct {
	Rel  string
	What string // "changed", "appeared" or "disappeared"
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %s since it was read", e.Rel, e.What)
}

// WriteError reports a change that failed part-way and the rollback that
// followed. Incomplete lists what the rollback could not undo; empty means
// every file is as it was, with its inode, owner, mode and links.
type WriteError struct {
	Rel        string
	Err        error
	Incomplete []string
}

func (e *WriteError) Error() string {
	msg := fmt.Sprintf("could not write %s: %v; ", e.Rel, e.Err)
	if len(e.Incomplete) == 0 {
		return msg + "every file was restored"
	}
	return msg + "the rollback was incomplete: " + strings.Join(e.Incomplete, "; ")
}

func (e *WriteError) Unwrap() error { return e.Err }

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// Context stops the transaction between two steps; what was done is
	// rolled back and the error wraps the context's error.
	Context context.Context
	// BeforeStep, when set, runs before each change is written (with its
	// index), after the first compare-and-swap pass. Tests use it to race a
	// swap against the write deterministically.
	BeforeStep func(i int)
}

// step is one change with its directory and what was done for it.
type step struct {
	c       *Change
	dirRel  string
	dir     *Dir
	missing []string // directories to create below dir
	base    string
	done    bool
	aside   string // a second name keeping the old inode, while the transaction runs
}

// Apply writes every change or none. Every file is compared with what the
// check read (compare-and-swap) before anything is written and again just
// before its own rename; every parent directory is verified by identity
// before each write; a new file is written to a temporary sibling created
// through the parent's handle, fsynced and renamed over the name. The old
// file is kept under a second hard link while the transaction runs, so a
// rollback puts back the very inode (owner, mode, links). A successful
// write keeps the owner and full mode (set-id bits included) of the file
// it replaces. After a SIGKILL each file is old or new; a temporary or kept
// sibling may remain.
func (t *Tree) Apply(changes []Change, opts ApplyOptions) error {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	steps := make([]*step, 0, len(changes))
	for i := range changes {
		c := &changes[i]
		dirRel, base := filepath.Split(c.Rel)
		if base == "" {
			return &Error{Rel: c.Rel, Reason: NotRegular, Err: errors.New("no file name")}
		}
		dirRel = filepath.Clean(dirRel)
		d, missing, err := t.Walk(dirRel)
		if err != nil {
			return err
		}
		if len(missing) > 0 && c.Old != nil {
			return &ConflictError{Rel: c.Rel, What: "disappeared"}
		}
		steps = append(steps, &step{c: c, dirRel: dirRel, dir: d, missing: missing, base: base})
	}
	for _, s := range steps {
		if err := s.cas(); err != nil {
			return err
		}
	}
	// Writes first, removals last, so a move never loses its content.
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].c.Data != nil && steps[j].c.Data == nil })
	tx := &txn{tree: t, dirs: map[*Dir]bool{}}
	done := false
	defer func() {
		// A panic between two steps (a BeforeStep, a bug) must not leave
		// some files new and others old: put back what was done, then let
		// the panic go on.
		if !done {
			if p := recover(); p != nil {
				tx.rollback()
				panic(p)
			}
		}
	}()
	for i, s := range steps {
		if opts.BeforeStep != nil {
			opts.BeforeStep(i)
		}
		err := ctx.Err()
		if err == nil {
			err = tx.do(s)
		}
		if err != nil {
			incomplete := tx.rollback()
			var ce *ConflictError
			var fe *Error
			done = true
			if len(incomplete) == 0 && (errors.As(err, &ce) || errors.As(err, &fe)) {
				return err
			}
			return &WriteError{Rel: s.c.Rel, Err: err, Incomplete: incomplete}
		}
	}
	done = true
	tx.commit()
	return nil
}

// cas fails when the file is not what the check read.
func (s *step) cas() error {
	if len(s.missing) > 0 {
		return nil // the parent does not exist: neither does the file
	}
	fi, err := s.dir.root.Lstat(s.base)
	switch {
	case err == nil && s.c.Old != nil:
		if !fi.Mode().IsRegular() {
			return &ConflictError{Rel: s.c.Rel, What: "changed"}
		}
		same, err := s.dir.SameContent(s.base, fi, s.c.Old.Data)
		if err != nil {
			return fmt.Errorf("read %s: %w", s.c.Rel, err)
		}
		if !same {
			return &ConflictError{Rel: s.c.Rel, What: "changed"}
		}
	case err == nil:
		return &ConflictError{Rel: s.c.Rel, What: "appeared"}
	case errors.Is(err, fs.ErrNotExist):
		if s.c.Old != nil {
			return &ConflictError{Rel: s.c.Rel, What: "disappeared"}
		}
	default:
		return fmt.Errorf("inspect %s: %w", s.c.Rel, err)
	}
	return nil
}

// txn records what was done, to undo it.
type txn struct {
	tree    *Tree
	done    []*step
	created []*Dir // directories created, outermost first
	dirs    map[*Dir]bool
}

func siblingName(base, kind string) string {
	if len(base) > 64 { // keep the name well below NAME_MAX
		base = base[:64]
	}
	return fmt.Sprintf(".%s.slim-%012x.%s", base, rand.Uint64()&(1<<48-1), kind)
}

func (t *txn) do(s *step) error {
	// Walk again: an earlier step may have created a directory this one
	// needs.
	d, missing, err := t.tree.Walk(s.dirRel)
	if err != nil {
		return err
	}
	if len(missing) > 0 && s.c.Old != nil {
		return &ConflictError{Rel: s.c.Rel, What: "disappeared"}
	}
	s.dir, s.missing = d, missing
	if err := t.tree.Verify(s.dir); err != nil {
		return err
	}
	for _, name := range s.missing {
		nd, err := t.tree.Mkdir(s.dir, name, 0o777)
		if err != nil {
			return err
		}
		t.created = append(t.created, nd)
		t.dirs[s.dir] = true
		s.dir = nd
	}
	s.missing = nil
	if err := t.tree.Verify(s.dir); err != nil {
		return err
	}
	if s.c.Data == nil {
		if err := s.cas(); err != nil {
			return err
		}
		aside := siblingName(s.base, "orig")
		if err := s.dir.root.Rename(s.base, aside); err != nil {
			return err
		}
		s.aside, s.done = aside, true
		t.done = append(t.done, s)
		t.dirs[s.dir] = true
		return nil
	}
	tmp, err := t.writeTemp(s.dir, s.base, s.c.Data, s.like())
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			s.dir.root.Remove(tmp)
		}
	}()
	// The compare-and-swap reads the whole file, so it runs first: the last
	// check of the chain of parents comes right before the link and the
	// rename.
	if err := s.cas(); err != nil {
		return err
	}
	if err := t.tree.Verify(s.dir); err != nil {
		return err
	}
	if s.c.Old != nil {
		aside := siblingName(s.base, "orig")
		if err := s.dir.root.Link(s.base, aside); err == nil {
			s.aside = aside
		}
	}
	if err := s.dir.root.Rename(tmp, s.base); err != nil {
		if s.aside != "" {
			s.dir.root.Remove(s.aside)
			s.aside = ""
		}
		return err
	}
	committed = true
	s.done = true
	t.done = append(t.done, s)
	t.dirs[s.dir] = true
	return nil
}

// like is the file whose mode and owner a write keeps.
func (s *step) like() *File {
	if s.c.Old != nil {
		return s.c.Old
	}
	return s.c.Like
}

// writeTemp writes data to a new temporary sibling of base in d, with the
// owner and full mode of like (when set), synced, and returns its name.
func (t *txn) writeTemp(d *Dir, base string, data []byte, like *File) (string, error) {
	tmp := siblingName(base, "tmp")
	// A file that replaces another gets its owner and mode before any byte
	// is written, and is private until then, so the new content of a
	// private file is never readable by others, not even for a moment. A
	// new file gets 0666 less the umask, as any new file does.
	perm := fs.FileMode(0o666)
	if like != nil {
		perm = 0o600
	}
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			d.root.Remove(tmp)
		}
	}()
	if like != nil {
		if err := keepOwner(f, like.Info); err != nil {
			return "", fmt.Errorf("cannot keep the owner of %s: %w", join(d.rel, base), err)
		}
		if err := f.Chmod(fullMode(like.Info)); err != nil {
			return "", err
		}
	}
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if like != nil && fullMode(like.Info)&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
		// A write by an unprivileged process clears set-id bits.
		if err := f.Chmod(fullMode(like.Info)); err != nil {
			return "", err
		}
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	ok = true
	return tmp, nil
}

// fullMode is the permission bits of fi with set-uid, set-gid and sticky.
func fullMode(fi fs.FileInfo) fs.FileMode {
	return fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// rollback undoes every step done, newest first, and removes the
// directories created. It returns what it could not undo.
func (t *txn) rollback() []string {
	var issues []string
	note := func(rel string, err error) {
		if err != nil {
			issues = append(issues, fmt.Sprintf("%s: %v", rel, err))
		}
	}
	for i := len(t.done) - 1; i >= 0; i-- {
		s := t.done[i]
		switch {
		case s.aside != "":
			// The old inode goes back under its name, replacing the new file
			// (or filling the gap a removal left). A kept inode that is gone
			// is a file not restored.
			note(s.c.Rel, s.dir.root.Rename(s.aside, s.base))
		case s.c.Old != nil:
			// No second link could be made (a file system without hard
			// links): write the old bytes back with the old owner and mode.
			// The file is then a new inode, detached from any other links,
			// which the caller is told.
			tmp, err := t.writeTemp(s.dir, s.base, s.c.Old.Data, s.c.Old)
			if err == nil {
				err = s.dir.root.Rename(tmp, s.base)
				if err != nil {
					s.dir.root.Remove(tmp)
				}
			}
			if err == nil {
				err = errors.New("its bytes, owner and mode were restored, but as a new inode (no second link could be kept), so other hard links to it no longer share it")
			}
			note(s.c.Rel, err)
		default:
			// A file this transaction created: already gone is fine.
			if err := s.dir.root.Remove(s.base); err != nil && !errors.Is(err, fs.ErrNotExist) {
				note(s.c.Rel, err)
			}
		}
	}
	for i := len(t.created) - 1; i >= 0; i-- {
		d := t.created[i]
		if err := d.parent.root.Remove(d.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			note(d.rel, err)
		}
		t.tree.forget(d)
	}
	t.sync()
	return issues
}

// commit drops the kept old inodes and makes the renames durable.
func (t *txn) commit() {
	for _, s := range t.done {
		if s.aside != "" {
			s.dir.root.Remove(s.aside)
		}
	}
	t.sync()
}

func (t *txn) sync() {
	for d := range t.dirs {
		d.Sync()
	}
}
