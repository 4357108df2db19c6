// Package safefs reaches files below one top directory through handles, so
// that what a containment check saw is what a write changes.
//
// A path check by name (lstat each component, resolve links) is only true
// at the moment it runs: a directory on the way can be swapped for a
// symbolic link to the git directory, or the top itself for a link
// elsewhere, before the write happens. A Tree closes that gap. The top is
// opened once and compared, by device and inode, with the identity the
// check recorded. Every directory below it is opened from its parent's
// handle one component at a time, refused when it is a symbolic link, a
// denied directory (the git dir) or a nested repository, and its identity
// is recorded. Reads and writes then go through those handles, and Verify
// re-walks the chain by name just before a write to confirm that every
// parent is still the directory it was.
package safefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Reason says why a directory may not be used.
type Reason int

const (
	// Changed: the name now refers to another file than the one recorded.
	Changed Reason = iota + 1
	// Link: a component is a symbolic link, which the check had resolved.
	Link
	// NotDir: a component exists and is not a directory.
	NotDir
	// Denied: the directory is one writes may never enter (a git dir).
	Denied
	// Nested: the directory holds a `.git` entry of its own.
	Nested
	// TooLarge: a file is larger than the caller's bound.
	TooLarge
	// NotRegular: a file is not a regular file.
	NotRegular
)

func (r Reason) String() string {
	switch r {
	case Changed:
		return "changed since it was checked"
	case Link:
		return "is a symbolic link"
	case NotDir:
		return "is not a directory"
	case Denied:
		return "is the repository's git directory"
	case Nested:
		return "holds a nested repository"
	case TooLarge:
		return "is too large"
	case NotRegular:
		return "is not a regular file"
	}
	return "is refused"
}

// Error reports a path below the top that may not be used, and why.
type Error struct {
	Rel    string // relative to the top, slash- or separator-joined
	Reason Reason
	Err    error // the underlying error, if any
}

func (e *Error) Error() string {
	msg := e.Rel + " " + e.Reason.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Options says which directories a Tree refuses.
type Options struct {
	// Deny lists directories no walk may enter, by identity (os.Stat of the
	// git dir and the common dir).
	Deny []fs.FileInfo
	// AllowNested lets a walk enter a directory holding a `.git` entry.
	AllowNested bool
	// Session is the session directory relative to the top ("" or "." for
	// the top). It and its ancestors are never refused as nested: the
	// session lives there by choice.
	Session string
}

// Tree is a top directory opened once, and the directories below it opened
// so far. It is not safe for concurrent use.
type Tree struct {
	top  *Dir
	opts Options
	dirs map[string]*Dir
}

// Dir is one directory handle with the identity it had when opened.
type Dir struct {
	parent *Dir
	name   string // component in parent; "" for the top
	rel    string // relative to the top; "." for the top
	root   *os.Root
	info   fs.FileInfo
}

// Open opens top and checks that it is the directory want describes (the
// identity a containment check recorded). A nil want skips the comparison.
func Open(top string, want fs.FileInfo, opts Options) (*Tree, error) {
	r, err := os.OpenRoot(top)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", top, err)
	}
	info, err := r.Stat(".")
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("stat %s: %w", top, err)
	}
	if want != nil && !os.SameFile(info, want) {
		r.Close()
		return nil, &Error{Rel: top, Reason: Changed}
	}
	d := &Dir{rel: ".", root: r, info: info}
	t := &Tree{top: d, opts: opts, dirs: map[string]*Dir{".": d}}
	for _, deny := range opts.Deny {
		if os.SameFile(info, deny) {
			r.Close()
			return nil, &Error{Rel: top, Reason: Denied}
		}
	}
	return t, nil
}

// Close closes every handle.
func (t *Tree) Close() error {
	for _, d := range t.dirs {
		d.root.Close()
	}
	t.dirs = nil
	return nil
}

// Top is the top directory's handle.
func (t *Tree) Top() *Dir { return t.top }

// Walk opens the existing directories of relDir (relative to the top, no
// "." or ".." components) one at a time from the top. It returns the
// deepest existing one and the components below it that do not exist. A
// component that is a link, not a directory, denied or nested is an
// *Error (for NotDir, Rel names that component).
func (t *Tree) Walk(relDir string) (*Dir, []string, error) {
	comps := split(relDir)
	d := t.top
	for i, c := range comps {
		if c == "." || c == ".." || c == "" {
			return nil, nil, &Error{Rel: relDir, Reason: Changed, Err: errors.New("not a clean relative path")}
		}
		if sub, ok := t.dirs[join(d.rel, c)]; ok {
			d = sub
			continue
		}
		fi, err := d.root.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) {
			return d, comps[i:], nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("inspect %s: %w", join(d.rel, c), err)
		}
		sub, err := t.open(d, c, fi)
		if err != nil {
			return nil, nil, err
		}
		d = sub
	}
	return d, nil, nil
}

// open opens the directory c of parent, whose Lstat was fi.
func (t *Tree) open(parent *Dir, c string, fi fs.FileInfo) (*Dir, error) {
	rel := join(parent.rel, c)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 || fi.Mode()&fs.ModeIrregular != 0:
		return nil, &Error{Rel: rel, Reason: Link}
	case !fi.IsDir():
		return nil, &Error{Rel: rel, Reason: NotDir}
	}
	r, err := parent.root.OpenRoot(c)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", rel, err)
	}
	info, err := r.Stat(".")
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	if !os.SameFile(info, fi) {
		r.Close()
		return nil, &Error{Rel: rel, Reason: Changed}
	}
	for _, deny := range t.opts.Deny {
		if os.SameFile(info, deny) {
			r.Close()
			return nil, &Error{Rel: rel, Reason: Denied}
		}
	}
	if !t.opts.AllowNested && !t.sessionAncestor(rel) {
		if _, err := r.Lstat(".git"); err == nil {
			r.Close()
			return nil, &Error{Rel: rel, Reason: Nested}
		}
	}
	d := &Dir{parent: parent, name: c, rel: rel, root: r, info: info}
	t.dirs[rel] = d
	return d, nil
}

// sessionAncestor reports whether rel is the session directory or one of
// its ancestors.
func (t *Tree) sessionAncestor(rel string) bool {
	s := t.opts.Session
	if s == "" || s == "." {
		return false
	}
	return s == rel || strings.HasPrefix(s, rel+string(filepath.Separator))
}

// forget closes d and drops it from the tree, after it was removed.
func (t *Tree) forget(d *Dir) {
	if t.dirs[d.rel] == d {
		delete(t.dirs, d.rel)
	}
	d.root.Close()
}

// Mkdir creates the directory name in d and opens it.
func (t *Tree) Mkdir(d *Dir, name string, perm fs.FileMode) (*Dir, error) {
	if err := d.root.Mkdir(name, perm); err != nil {
		return nil, err
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	return t.open(d, name, fi)
}

// Verify confirms, by name from the top, that every directory from the top
// down to d is still the one opened: each parent's entry for the child is
// that same directory, not a link or another directory swapped in.
func (t *Tree) Verify(d *Dir) error {
	for c := d; c.parent != nil; c = c.parent {
		fi, err := c.parent.root.Lstat(c.name)
		if err != nil {
			return &Error{Rel: c.rel, Reason: Changed, Err: err}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &Error{Rel: c.rel, Reason: Link}
		}
		if !os.SameFile(fi, c.info) {
			return &Error{Rel: c.rel, Reason: Changed}
		}
	}
	return nil
}

// Rel is d's path relative to the top ("." for the top).
func (d *Dir) Rel() string { return d.rel }

// Root is d's handle. Operations on single names in it (no separators)
// act on d itself, wherever it has been moved.
func (d *Dir) Root() *os.Root { return d.root }

// ReadRegular reads the regular file name in d, which must be what lst (its
// Lstat) describes, refusing files above limit bytes without reading them.
// It never blocks on a FIFO and never follows a link at name.
func (d *Dir) ReadRegular(name string, lst fs.FileInfo, limit int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := d.openRegular(name, lst, limit)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// One buffer of the size the handle reports, plus room to notice a
	// file that grew meanwhile: no doubling reallocations on large files.
	data := make([]byte, fi.Size(), fi.Size()+1)
	n, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return data[:n], fi, nil // it shrank while being read
	case err != nil:
		return nil, nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit-int64(n)+1))
	if err != nil {
		return nil, nil, err
	}
	if len(rest) > 0 {
		data = append(data, rest...)
	}
	if int64(len(data)) > limit {
		return nil, nil, &Error{Rel: join(d.rel, name), Reason: TooLarge}
	}
	return data, fi, nil
}

// ReadFile reads the file rel (relative to the top) through the tree's
// handles, refusing it above limit bytes without reading it. It returns a
// nil File and a nil error when the file or one of its parents does not
// exist, and the Lstat of a file that exists but is not regular as other
// (with a nil File). A last component that is a symbolic link is an *Error
// with Reason Link: a containment check resolves links, so one found here
// appeared after it. A parent that is not a directory is an *Error with
// Reason NotDir naming that parent.
func (t *Tree) ReadFile(rel string, limit int64) (f *File, other fs.FileInfo, err error) {
	dirRel, base := filepath.Split(rel)
	d, missing, err := t.Walk(filepath.Clean(dirRel))
	if err != nil || len(missing) > 0 || base == "" {
		return nil, nil, err
	}
	lst, err := d.root.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("inspect %s: %w", rel, err)
	case lst.Mode()&fs.ModeSymlink != 0:
		return nil, nil, &Error{Rel: rel, Reason: Link}
	case !lst.Mode().IsRegular():
		return nil, lst, nil
	}
	data, fi, err := d.ReadRegular(base, lst, limit)
	if err != nil {
		return nil, nil, err
	}
	return &File{Data: data, Info: fi}, nil, nil
}

// ReadPath reads the regular file at path the way ReadRegular does (no
// link followed at its last component, no blocking on a FIFO, nothing read
// above limit), for a file outside any Tree. A path that is not a regular
// file gives an *Error with Reason NotRegular.
func ReadPath(path string, limit int64) ([]byte, fs.FileInfo, error) {
	r, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	base := filepath.Base(path)
	lst, err := r.Lstat(base)
	if err != nil {
		return nil, nil, err
	}
	d := &Dir{rel: filepath.Dir(path), root: r}
	return d.ReadRegular(base, lst, limit)
}

// SameContent reports whether the regular file name in d (whose Lstat is
// lst) holds exactly want, reading it in blocks instead of whole.
func (d *Dir) SameContent(name string, lst fs.FileInfo, want []byte) (bool, error) {
	if lst.Mode().IsRegular() && lst.Size() != int64(len(want)) {
		return false, nil
	}
	f, fi, err := d.openRegular(name, lst, int64(len(want)))
	var fe *Error
	if errors.As(err, &fe) && (fe.Reason == TooLarge || fe.Reason == Changed || fe.Reason == NotRegular) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi.Size() != int64(len(want)) {
		return false, nil
	}
	buf := make([]byte, 64<<10)
	off := 0
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if off+n > len(want) || !bytes.Equal(buf[:n], want[off:off+n]) {
				return false, nil
			}
			off += n
		}
		if errors.Is(err, io.EOF) {
			return off == len(want), nil
		}
		if err != nil {
			return false, err
		}
	}
}

// openRegular opens the regular file name in d and checks the handle is
// the file lst describes and not larger than limit.
func (d *Dir) openRegular(name string, lst fs.FileInfo, limit int64) (*os.File, fs.FileInfo, error) {
	rel := join(d.rel, name)
	if !lst.Mode().IsRegular() {
		return nil, nil, &Error{Rel: rel, Reason: NotRegular}
	}
	if lst.Size() > limit {
		return nil, nil, &Error{Rel: rel, Reason: TooLarge}
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !os.SameFile(fi, lst) || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Rel: rel, Reason: Changed}
	}
	if fi.Size() > limit {
		f.Close()
		return nil, nil, &Error{Rel: rel, Reason: TooLarge}
	}
	return f, fi, nil
}

// Sync flushes d's entries (renames, removals); some file systems cannot
// sync a directory, so errors are ignored.
func (d *Dir) Sync() {
	if f, err := d.root.Open("."); err == nil {
		f.Sync()
		f.Close()
	}
}

func split(rel string) []string {
	if rel == "" || rel == "." {
		return nil
	}
	return strings.FieldsFunc(rel, func(r rune) bool { return r == '/' || r == filepath.Separator })
}

func join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + string(filepath.Separator) + name
}
