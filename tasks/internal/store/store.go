package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slimgate/slim/internal/atomicfile"
	"github.com/slimgate/slim/internal/filelock"
	"github.com/slimgate/slim/internal/statedir"
)

// File names inside a scope directory.
const (
	DocumentName = "state.json"
	LockName     = "state.lock"
)

// Defaults of Options.
const (
	// DefaultMaxBytes bounds the document. Hundreds of jobs, leases and
	// ops take well under a megabyte; a larger file is refused unread.
	DefaultMaxBytes = 32 << 20
	// DefaultLockTimeout bounds the wait for the lock. A transaction
	// holds it for milliseconds, so a longer wait means a stuck peer.
	DefaultLockTimeout = 2 * time.Second
)

// Options tune a Store; zero values take the defaults.
type Options struct {
	// LockTimeout bounds how long Update waits for the lock before it
	// gives up with Busy (DefaultLockTimeout when 0).
	LockTimeout time.Duration
	// MaxBytes bounds the document read and written (DefaultMaxBytes when
	// 0).
	MaxBytes int64
	// Now is the clock (time.Now when nil). It stamps Meta.CreatedAt.
	Now func() time.Time
	// Observe, when set, is called after every Update with its timings,
	// from the goroutine that ran it (so possibly from several at once).
	Observe func(Timing)
}

// Timing is what one Update cost.
type Timing struct {
	Wait time.Duration // until the lock was held
	Hold time.Duration // the lock held: read, decode, fn, encode, write, fsync, rename
	// Where the hold went: Read is reading and decoding the document,
	// Encode checking and encoding the result, Write replacing the
	// document (temporary, fsync, rename). The rest of Hold is fn and
	// removing temporaries.
	Read, Encode, Write time.Duration
	// Sync is the directory's fsync, after the lock was released and
	// before Update returned; it is not part of Hold.
	Sync  time.Duration
	Bytes int  // size of the document written, or read when nothing was written
	Wrote bool // false when the transaction failed or changed nothing
	Temps int  // temporaries of killed writers removed
	// Archived: the transaction read the archive (or had it from a
	// version 1 document); ArchiveRead is the time that took, within Read
	// and fn. ArchiveWrite is the time writing a new archive took (within
	// Write), ArchiveBytes its size; both 0 when it was not written.
	Archived     bool
	ArchiveRead  time.Duration
	ArchiveWrite time.Duration
	ArchiveBytes int
}

// Store is the durable state of one scope: a live JSON document and the
// archive it names, in a private directory, changed only by Update under
// an exclusive lock on a sidecar lock file, and replaced atomically
// (temporary file, fsync, rename, and after the lock is released, fsync
// of the directory; a new archive is a new file, durable before the
// document names it), so a process killed at any moment leaves the old or
// the new state, never a mix.
// The lock is advisory: every writer must go through a Store. It is taken
// only for the transaction itself and the kernel drops it when its holder
// dies, so no lock is ever left stale. A Store holds no open files and is
// safe for concurrent use.
type Store struct {
	dir, doc, lock string
	timeout        time.Duration
	max            int64
	now            func() time.Time
	observe        func(Timing)
	beforeWrite    func()       // tests: called just before the document is replaced
	afterArchive   func()       // tests: called once a new archive is durable, before the document is written
	syncDir        func(string) // atomicfile.SyncDir; tests wrap it
}

// ScopeDir returns the directory of the scope of one project directory
// and one server: <stateDir>/tasks/<first 16 hex digits of
// sha256(realpath(directory) + "\x00" + serverURL)>. The directory is
// resolved through symbolic links (made absolute when it cannot be), and
// trailing slashes are dropped from the server URL, so every spelling of
// the same project and server shares one scope: two scopes for one
// project would let two leases exist for one task.
func ScopeDir(stateDir, directory, serverURL string) string {
	dir := directory
	if r, err := filepath.EvalSymlinks(directory); err == nil {
		dir = r
	}
	if a, err := filepath.Abs(dir); err == nil {
		dir = a
	}
	sum := sha256.Sum256([]byte(dir + "\x00" + strings.TrimRight(serverURL, "/")))
	return filepath.Join(stateDir, "tasks", hex.EncodeToString(sum[:])[:16])
}

// OpenScope checks the state root (see statedir.Prepare), creates or
// checks its tasks directory, and opens the scope of directory and
// serverURL.
func OpenScope(stateDir, directory, serverURL string, o Options) (*Store, error) {
	if err := statedir.Prepare(stateDir); err != nil {
		return nil, dirErr(err, stateDir)
	}
	if err := statedir.EnsureDir(stateDir, "tasks"); err != nil {
		return nil, dirErr(err, filepath.Join(stateDir, "tasks"))
	}
	return Open(ScopeDir(stateDir, directory, serverURL), o)
}

// Open returns the store in the scope directory dir, creating it with mode
// 0700 when missing. An existing dir must be a real directory (a symbolic
// link is refused, not followed) of the current user; group and other
// permissions on it are removed. Nothing else is read or written until
// the first View or Update.
func Open(dir string, o Options) (*Store, error) {
	switch {
	case o.LockTimeout < 0:
		return nil, newErr(Invalid, CodeBadOptions, nil, "the lock timeout %v is negative", o.LockTimeout)
	case o.MaxBytes < 0:
		return nil, newErr(Invalid, CodeBadOptions, nil, "the size bound %d is negative", o.MaxBytes)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, newErr(IO, CodeIO, err, "cannot use %s", dir)
	}
	if err := statedir.PrivateDir(abs); err != nil {
		return nil, dirErr(err, abs)
	}
	s := &Store{
		dir:     abs,
		doc:     filepath.Join(abs, DocumentName),
		lock:    filepath.Join(abs, LockName),
		timeout: o.LockTimeout,
		max:     o.MaxBytes,
		now:     o.Now,
		observe: o.Observe,
		syncDir: atomicfile.SyncDir,
	}
	if s.timeout == 0 {
		s.timeout = DefaultLockTimeout
	}
	if s.max == 0 {
		s.max = DefaultMaxBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

func dirErr(err error, path string) *Error {
	if errors.Is(err, statedir.ErrUnsafe) {
		return newErr(Unsafe, CodeDirUnsafe, err, "cannot trust %s", path)
	}
	return newErr(IO, CodeIO, err, "cannot use %s", path)
}

// Dir returns the scope directory.
func (s *Store) Dir() string { return s.dir }

// Path returns the document's path.
func (s *Store) Path() string { return s.doc }

// View runs fn on the current state without taking the lock: every file
// is only ever replaced whole and the document names the one archive that
// goes with it, so a reader sees one complete version. Changes fn makes
// are discarded. A missing document reads as NewState(). A document or an
// archive that cannot be used is an error (Corrupt, Unsupported): fn is
// not called, or for an archive fn asked for, its result is replaced by
// the error. fn's error is returned as it is. The version View sees may
// not be durable yet (see Update), so a remote write is never decided on
// it alone.
func (s *Store) View(fn func(*State) error) error {
	for try := 0; ; try++ {
		st, _, err := s.read()
		if err != nil {
			return err
		}
		var f *os.File
		if seq := st.Meta.Archive.Seq; seq != 0 {
			// The archive is opened now, at once, even if fn never asks
			// for it: a writer may replace the document and remove this
			// archive at any moment, and an open file stays readable. One
			// removed before it could be opened belongs to a document
			// already replaced, which is read again.
			name := archiveFile(seq)
			f, err = openArchive(filepath.Join(s.dir, name))
			if errors.Is(err, fs.ErrNotExist) && try < viewTries {
				continue
			}
			if err != nil {
				return archiveReadErr(name, err)
			}
			st.arc.load = func() ([]byte, error) { return readArchive(f, name, s.max) }
		}
		err = fn(st)
		if f != nil {
			f.Close()
		}
		if st.arc.err != nil {
			return st.arc.err
		}
		return err
	}
}

// viewTries bounds how many times View reads the document again because
// the archive it named was replaced before View could open it: each time
// means a writer committed in between, which takes milliseconds.
const viewTries = 20

// Update runs one transaction: it takes the lock (waiting at most the lock
// timeout, then Busy), reads and decodes the document (a missing one is
// NewState()), runs fn on it, and when fn returns nil writes what changed
// back atomically before releasing the lock, and durably before it
// returns. The archive is read only if fn asks for it (or too many
// settled jobs wait to move into it, see State.settle) and written only
// when it changed. fn's error is returned as it is and nothing is
// written; so is a Corrupt or Unsupported document, which fn never sees
// and which stays untouched, and an archive fn asked for that cannot be
// used. A result that breaks the schema or is larger than the bound is
// Invalid and not written. When the document existed and nothing changed,
// nothing is written. fn must not do network I/O or wait on other
// processes: the lock is held while it runs.
//
// When Update returns, whatever it returns, the document it read, and the
// one it wrote, are durable: a crash of the machine cannot take back a
// version a caller has acted on. The lock is released before the last
// step that makes them so, the fsync of the directory, so that the next
// transaction does not wait on the disk for it. Why that is safe:
//
//  1. The new document is written to a temporary file and fsynced before
//     it is renamed over the old one, so every version a crash can leave
//     behind is a whole one. A new archive is a new file, written the same
//     way and made durable (the directory fsynced) before the document
//     that names it is written.
//  2. Between the rename and the directory's fsync, a crash of the
//     machine may bring back the version before; meanwhile the next
//     transaction may already have read the new one and built on it. The
//     archive the version before names is still there: it is removed only
//     after that fsync.
//  3. Every Update that took the lock fsyncs the directory after
//     releasing it and before returning, also when it wrote nothing or
//     failed. That fsync makes durable the version the directory names
//     at that moment: the one this transaction read or wrote, or a later
//     one, which holds it (each transaction starts from the one before).
//     So whatever a transaction saw is durable before its caller learns
//     the outcome.
//  4. Callers act (send a message, abort a run) only on what an Update
//     returned: a send is decided in a transaction (MarkSent). View takes
//     no lock and may see a version whose directory fsync has not
//     finished; what it shows may be lost to a crash, so nothing is sent
//     on its word.
func (s *Store) Update(fn func(*State) error) (err error) {
	var t Timing
	start := time.Now()
	lk, lerr := filelock.Acquire(s.lock, s.timeout)
	if lerr != nil {
		switch {
		case errors.Is(lerr, filelock.ErrTimeout):
			return newErr(Busy, CodeBusy, lerr, "another process held the lock on %s for more than %v", s.lock, s.timeout)
		case errors.Is(lerr, filelock.ErrNotRegular):
			return newErr(Unsafe, CodeLockUnsafe, lerr, "cannot trust the lock file")
		}
		return newErr(IO, CodeIO, lerr, "cannot take the lock")
	}
	locked := time.Now()
	t.Wait = locked.Sub(start)
	superseded := int64(0) // the archive the written document no longer names
	defer func() {
		// Unlocking closes the descriptor, which drops the lock even when
		// the unlock call itself fails, so its error changes nothing.
		lk.Unlock()
		t.Hold = time.Since(locked)
		syncAt := time.Now()
		s.syncDir(s.doc)
		t.Sync = time.Since(syncAt)
		if superseded != 0 {
			// Only now is the document that no longer names it durable.
			os.Remove(filepath.Join(s.dir, archiveFile(superseded)))
		}
		if s.observe != nil {
			s.observe(t)
		}
	}()
	readAt := time.Now()
	st, raw, err := s.read()
	t.Read = time.Since(readAt)
	if err != nil {
		return err
	}
	ref := st.Meta.Archive
	// Every writer holds the lock, so any temporary file left now is a
	// killed writer's, and any archive the document does not name is
	// either superseded or a killed writer's.
	t.Temps = s.sweep(ref.Seq)
	if ref.Seq != 0 {
		st.arc.load = func() ([]byte, error) { return s.readArchiveFile(ref.Seq) }
	}
	t.Bytes = len(raw)
	ferr := fn(st)
	if st.arc.err != nil {
		return st.arc.err
	}
	if ferr != nil {
		return ferr
	}
	if st.Meta.CreatedAt.IsZero() {
		st.Meta.CreatedAt = s.now().UTC()
	}
	encodeAt := time.Now()
	// Which archive the document names is the store's to say.
	st.Meta.Archive = ref
	arcData, arcWrite, err := st.settle()
	t.ArchiveRead = st.arc.took
	t.Archived = st.arc.a != nil
	if err != nil {
		if _, ok := AsError(err); ok {
			return err
		}
		return newErr(Invalid, CodeBadUpdate, err, "cannot encode the archive; nothing was written")
	}
	if arcWrite {
		st.Meta.Archive = ArchiveRef{}
		if arcData != nil {
			st.Meta.Archive = ArchiveRef{Seq: ref.Seq + 1, Jobs: sortedKeys(st.arc.a.Jobs)}
		}
	}
	if err := st.check(); err != nil {
		return newErr(Invalid, CodeBadUpdate, err, "the transaction left a state that breaks the schema; nothing was written")
	}
	// Room for the document to grow a little without reallocating.
	data, err := appendState(make([]byte, 0, len(raw)+len(raw)/8+4096), st)
	if err != nil {
		return newErr(Invalid, CodeBadUpdate, err, "cannot encode the state; nothing was written")
	}
	data = append(data, '\n')
	t.Encode = time.Since(encodeAt)
	for _, b := range [][]byte{data, arcData} {
		if int64(len(b)) > s.max {
			return newErr(Invalid, CodeTooLarge, nil, "the new document or archive would be %d bytes, more than the bound of %d; nothing was written", len(b), s.max)
		}
	}
	if !arcWrite && raw != nil && bytes.Equal(raw, data) {
		return nil
	}
	writeAt := time.Now()
	if arcData != nil {
		name := filepath.Join(s.dir, archiveFile(st.Meta.Archive.Seq))
		if err := atomicfile.WriteFileNoDirSync(name, arcData, 0o600); err != nil {
			return newErr(IO, CodeIO, err, "cannot write the archive")
		}
		// The archive's name must be durable before the document that
		// names it can be.
		s.syncDir(name)
		t.ArchiveWrite, t.ArchiveBytes = time.Since(writeAt), len(arcData)
		if s.afterArchive != nil {
			s.afterArchive()
		}
	}
	if s.beforeWrite != nil {
		s.beforeWrite()
	}
	if err := atomicfile.WriteFileNoDirSync(s.doc, data, 0o600); err != nil {
		return newErr(IO, CodeIO, err, "cannot write the document")
	}
	t.Write = time.Since(writeAt)
	t.Bytes, t.Wrote = len(data), true
	if arcWrite {
		superseded = ref.Seq
	}
	return nil
}

// sweep removes, under the lock, the temporary files killed writers left
// beside the document and the archives, and every archive other than the
// one numbered keep (0: none), and returns how many temporaries it
// removed. An archive is removed only after the directory is fsynced:
// the document that stopped naming it may not be durable yet (its
// writer fsyncs the directory after releasing the lock).
func (s *Store) sweep(keep int64) int {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return 0
	}
	temps := 0
	var stale []string
	docTemp := "." + DocumentName + ".tmp-"
	for _, e := range ents {
		n := e.Name()
		switch {
		case e.IsDir():
		case strings.HasPrefix(n, docTemp) || (strings.HasPrefix(n, "."+ArchivePrefix) && strings.Contains(n, ArchiveSuffix+".tmp-")):
			if os.Remove(filepath.Join(s.dir, n)) == nil {
				temps++
			}
		case strings.HasPrefix(n, ArchivePrefix) && strings.HasSuffix(n, ArchiveSuffix):
			seq, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(n, ArchivePrefix), ArchiveSuffix), 10, 64)
			if err == nil && seq > 0 && seq != keep && archiveFile(seq) == n {
				stale = append(stale, n)
			}
		}
	}
	if len(stale) > 0 {
		s.syncDir(s.doc)
		for _, n := range stale {
			os.Remove(filepath.Join(s.dir, n))
		}
	}
	return temps
}

// read reads and decodes the document. It never follows a symbolic link,
// never blocks on a named pipe and reads at most the bound. A missing
// document is NewState() with nil raw bytes.
func (s *Store) read() (*State, []byte, error) {
	raw, err := readDocument(s.doc, s.max)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NewState(), nil, nil
	case errors.Is(err, statedir.ErrNotRegular):
		return nil, nil, newErr(Corrupt, CodeNotRegular, err, "the document is not a regular file; it was left as it is")
	case errors.Is(err, statedir.ErrTooLarge):
		return nil, nil, newErr(Corrupt, CodeTooLarge, err, "the document is over the size bound; it was left as it is")
	case err != nil:
		return nil, nil, newErr(IO, CodeIO, err, "cannot read the document")
	}
	st, err := decode(s.doc, raw)
	if err != nil {
		return nil, nil, err
	}
	return st, raw, nil
}

// readArchiveFile reads the archive numbered seq, under the lock.
func (s *Store) readArchiveFile(seq int64) ([]byte, error) {
	name := archiveFile(seq)
	f, err := openArchive(filepath.Join(s.dir, name))
	if err != nil {
		return nil, archiveReadErr(name, err)
	}
	defer f.Close()
	return readArchive(f, name, s.max)
}

// openArchive opens an archive file as statedir.ReadFile opens a file: no
// symbolic link followed (one is ErrNotRegular), no wait on a named pipe.
func openArchive(path string) (*os.File, error) {
	f, err := statedir.OpenNoFollow(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: %w", path, statedir.ErrNotRegular)
		}
	}
	return f, err
}

// archiveReadErr is the error of an archive that cannot be read. One that
// is missing is Corrupt: the document names it, and every writer makes
// an archive durable before a document names it.
func archiveReadErr(name string, err error) *Error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newErr(Corrupt, CodeCorrupt, err, "the archive %s the document names is missing; the files were left as they are", name)
	case errors.Is(err, statedir.ErrNotRegular):
		return newErr(Corrupt, CodeNotRegular, err, "the archive %s is not a regular file; it was left as it is", name)
	case errors.Is(err, statedir.ErrTooLarge):
		return newErr(Corrupt, CodeTooLarge, err, "the archive %s is over the size bound; it was left as it is", name)
	}
	return newErr(IO, CodeIO, err, "cannot read the archive %s", name)
}

// readDocument is statedir.ReadFile (no link followed, no wait on a named
// pipe, nothing but a regular file, at most max bytes) reading into a
// buffer of the file's size. Growing the buffer as it fills allocates the
// document's size two or three times over, which on a document of a
// thousand jobs is enough to start a garbage collection in the middle of
// the transaction. Anything but an open regular file within the bound
// goes to statedir.ReadFile, whose answer (and error) it returns.
func readDocument(path string, max int64) ([]byte, error) {
	f, err := statedir.OpenNoFollow(path)
	if err != nil {
		return statedir.ReadFile(path, max)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > max {
		return statedir.ReadFile(path, max)
	}
	return readAll(f, path, fi.Size(), max)
}

// readOpen reads an open file that must be a regular file within max
// bytes, into one buffer of its size.
func readOpen(f *os.File, path string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s: %w", path, statedir.ErrNotRegular)
	case fi.Size() > max:
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d)", path, statedir.ErrTooLarge, fi.Size(), max)
	}
	return readAll(f, path, fi.Size(), max)
}

// readAll reads f, of size bytes when it was opened, to its end.
func readAll(f *os.File, path string, size, max int64) ([]byte, error) {
	// One byte more than the size, to see the end without growing.
	data := make([]byte, 0, size+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		switch {
		case err == io.EOF:
			return data, nil
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", path, err)
		case int64(len(data)) > max:
			return nil, fmt.Errorf("%s: %w (more than %d bytes)", path, statedir.ErrTooLarge, max)
		case len(data) == cap(data):
			// The file grew after Stat.
			data = append(data, 0)[:len(data)]
		}
	}
}
