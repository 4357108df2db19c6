// Package cache keeps fetch results on disk, so that a page fetched by one
// `slim fetch` process is still there for the next one: every call is its
// own process, and a cache in memory would never be hit twice.
//
// The store does not know what it keeps. The caller hands it an opaque JSON
// payload with the HTTP validators (ETag, Last-Modified) and the time it was
// fetched; a later Get answers with the payload and whether it is Fresh,
// Stale (expired, but it has a validator, so a conditional request can
// renew it with Restamp) or a Miss. Keys are hashes made by Key from the
// parts that identify a result, and one result may be reachable under
// several keys (the requested URL, the final URL): the first key holds the
// entry, the others are aliases that name it.
//
// Below the root given to Open, a version segment lets a format change
// start from an empty directory:
//
//	v1/entries/<key>.json.gz   one gzip file per result: a JSON header line, then the payload
//	v1/alias/<key>             the key of the entry this key stands for
//	v1/llms-neg/<hash>.json    an origin found to have no llms.txt
//	v1/.sweep.lock             held by the process that is sweeping
//
// Directories are 0700 and files 0600, because fetched pages may be
// private. Many processes may use one cache at once without a lock: every
// write goes to a temporary file in the target's directory, which is then
// renamed over the target, so a reader sees the old file or the new one
// and a process killed at any moment leaves at most a stray temporary file
// (removed by the sweeper once it is an hour old). Two processes storing
// the same key both write, and the last rename wins. Anything that fails to
// decode is removed and counts as a miss. After each Put one process at a
// time sweeps: it deletes expired entries, old temporary files and aliases
// whose entry is gone, then the least recently used entries while the
// directory is over its size cap.
//
// The cache is best-effort: errors are *Error, and a caller is expected to
// ignore failed writes and treat failed reads as misses. The package reads
// no environment variable; the caller resolves the directory and limits.
package cache

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Defaults for the zero Options fields.
const (
	DefaultTTL           = 15 * time.Minute
	DefaultMaxStale      = 24 * time.Hour
	DefaultNegativeTTL   = time.Hour
	DefaultMaxBytes      = 50 << 20
	DefaultMaxEntryBytes = 64 << 20
)

const (
	// clockSkew is how far in the future a stored time may lie and still
	// count as now. Beyond it the clock has moved back (or the entry was
	// written by a machine with another clock) and the entry's age is
	// unknown, so it is stale.
	clockSkew = time.Minute
	// tempMaxAge is how old a temporary file must be before the sweeper
	// takes it for the leftover of a killed writer.
	tempMaxAge = time.Hour
	// tempPrefix starts the name of every temporary file.
	tempPrefix = ".tmp-"
	// sweepGoal is the share of MaxBytes (in tenths) that a sweep over the
	// cap brings the directory down to, so the next few writes do not each
	// have to evict.
	sweepGoal = 8
	// maxSmallFile bounds alias and negative probe files.
	maxSmallFile = 64 << 10
	// maxOrigin bounds an origin remembered by the negative probe cache.
	maxOrigin = 4 << 10
)

// Options configure a Store. Zero fields take the defaults above.
type Options struct {
	// Dir is the cache root; the store lives in its "v1" subdirectory.
	Dir string
	// TTL is how long after StoredAt an entry is fresh.
	TTL time.Duration
	// MaxStale is how long after StoredAt an expired entry that has an
	// ETag or a Last-Modified is kept for revalidation. A value below TTL
	// is raised to TTL.
	MaxStale time.Duration
	// NegativeTTL is how long a failed llms.txt probe is remembered.
	NegativeTTL time.Duration
	// MaxBytes caps the size of the files under the store. A sweep that
	// finds more deletes the least recently used entries until the total
	// is under 80% of it.
	MaxBytes int64
	// MaxEntryBytes bounds one entry, compressed and decompressed. A
	// larger file is corrupt; a larger payload is not stored. An entry
	// whose file would take more than 80% of MaxBytes is not stored
	// either, as it would evict everything else and then itself.
	MaxEntryBytes int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// State is what Get found.
type State int

const (
	// Miss: no usable entry (none, expired, or corrupt and removed).
	Miss State = iota
	// Fresh: the entry may be used as it is.
	Fresh
	// Stale: the entry has expired but has a validator and is within
	// MaxStale; it may be used after the origin confirms it (a 304), when
	// the caller should Restamp it.
	Stale
)

func (s State) String() string {
	switch s {
	case Fresh:
		return "fresh"
	case Stale:
		return "stale"
	}
	return "miss"
}

// Entry is one cached result.
type Entry struct {
	// StoredAt is when the result was fetched (or last revalidated). Put
	// uses the store's clock when it is zero.
	StoredAt time.Time
	// ETag and LastModified are the response's validators, if any.
	ETag         string
	LastModified string
	// Payload is the caller's result: bytes the store keeps as they are.
	Payload []byte
}

// Store is an open cache directory. It holds no lock and no open file, so
// many Stores, in one process or many, may share a directory.
type Store struct {
	root, entries, alias, neg string
	ttl, maxStale, negTTL     time.Duration
	maxBytes, maxEntry        int64
	now                       func() time.Time
	// beforeRename, when set, runs once a temporary file is complete and
	// before it is renamed into place. Tests use it to stop a writer at
	// the worst moment.
	beforeRename func(tmp string)
}

// Open prepares the cache under o.Dir, creating the directories it needs
// (mode 0700). An existing o.Dir must be a directory of the current user
// that group and others cannot write; a symbolic link there is followed
// only when it belongs to the current user or to root. Below it nothing
// that is a link, a file or another user's is used.
func Open(o Options) (*Store, error) {
	if o.Dir == "" {
		return nil, newErr(Invalid, CodeBadOptions, nil, "no cache directory given")
	}
	if o.TTL < 0 || o.MaxStale < 0 || o.NegativeTTL < 0 || o.MaxBytes < 0 || o.MaxEntryBytes < 0 {
		return nil, newErr(Invalid, CodeBadOptions, nil, "negative durations or sizes in the options")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, newErr(Invalid, CodeBadOptions, err, "cannot resolve %s", o.Dir)
	}
	s := &Store{
		root:     filepath.Join(dir, "v1"),
		ttl:      orDefault(o.TTL, DefaultTTL),
		maxStale: orDefault(o.MaxStale, DefaultMaxStale),
		negTTL:   orDefault(o.NegativeTTL, DefaultNegativeTTL),
		maxBytes: orDefault(o.MaxBytes, DefaultMaxBytes),
		maxEntry: orDefault(o.MaxEntryBytes, DefaultMaxEntryBytes),
		now:      o.Now,
	}
	s.maxStale = max(s.maxStale, s.ttl)
	if s.now == nil {
		s.now = time.Now
	}
	s.entries = filepath.Join(s.root, "entries")
	s.alias = filepath.Join(s.root, "alias")
	s.neg = filepath.Join(s.root, "llms-neg")
	if err := prepareRoot(dir); err != nil {
		return nil, err
	}
	for _, d := range []string{s.root, s.entries, s.alias, s.neg} {
		if err := ensureDir(d); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Key returns the key for a result identified by parts: the SHA-256, in
// lower-case hex, of the parts each prefixed by its length, so that no two
// different lists of parts share an encoding ("a", "b" is not "ab").
func Key(parts ...string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// validKey reports whether k has the shape Key gives: 64 lower-case hex
// digits. Keys become file names, so nothing else is accepted.
func validKey(k string) bool {
	if len(k) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func badKey(k string) *Error {
	return newErr(Invalid, CodeBadKey, nil, "%q is not a cache key (make one with Key)", k)
}

func (s *Store) entryPath(key string) string { return filepath.Join(s.entries, key+".json.gz") }
func (s *Store) aliasPath(key string) string { return filepath.Join(s.alias, key) }

// state classifies an entry with header h at time now.
func (s *Store) state(h header, now time.Time) State {
	if h.StoredAt.Sub(now) > clockSkew {
		if h.hasValidator() {
			return Stale
		}
		return Miss
	}
	age := now.Sub(h.StoredAt)
	switch {
	case age < s.ttl:
		return Fresh
	case h.hasValidator() && age < s.maxStale:
		return Stale
	}
	return Miss
}

// Get looks key up, following an alias one level. A corrupt file is removed
// and reported with a Corrupt error (still a Miss); an expired entry, or an
// alias whose entry is gone, is removed quietly. A Fresh or Stale hit marks
// the entry as recently used, which is what the size cap's eviction order
// goes by.
func (s *Store) Get(key string) (*Entry, State, error) {
	if !validKey(key) {
		return nil, Miss, badKey(key)
	}
	primary, fromAlias, err := s.resolve(key)
	if primary == "" {
		return nil, Miss, err
	}
	path := s.entryPath(primary)
	e, fi, err := s.readEntry(path, primary)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if fromAlias {
			removeSame(s.aliasPath(key), nil)
		}
		return nil, Miss, nil
	case damaged(err):
		removeSame(path, fi)
		return nil, Miss, corrupt(path, err)
	case err != nil:
		return nil, Miss, ioErr(err, "cannot read %s", path)
	}
	now := s.now()
	st := s.state(header{e.StoredAt, e.ETag, e.LastModified}, now)
	if st == Miss {
		removeSame(path, fi)
		return nil, Miss, nil
	}
	os.Chtimes(path, now, now) // recency only; a failure costs nothing but eviction order
	return e, st, nil
}

// resolve returns the primary key that key names: key itself when it has
// an entry, else the key in its alias file. It returns "" when there is
// neither (with an error when the alias file was unreadable; a corrupt one
// is removed).
func (s *Store) resolve(key string) (primary string, fromAlias bool, err error) {
	if _, err := os.Lstat(s.entryPath(key)); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, false, nil
	}
	path := s.aliasPath(key)
	data, fi, err := readSmall(path, maxSmallFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err == nil && !validKey(string(data)):
		err = errors.New("does not hold a key")
		fallthrough
	case damaged(err):
		removeSame(path, fi)
		return "", false, corrupt(path, err)
	case err != nil:
		return "", false, ioErr(err, "cannot read %s", path)
	}
	return string(data), true, nil
}

// Put stores e under keys[0] and makes each further key an alias of it.
// Whatever keys[0] was before (an entry or an alias) is replaced, and so is
// an older entry under an alias key, so every key reaches the newest
// result. It then sweeps the cache unless another process is sweeping.
// When the entry cannot be written nothing else is changed; an error in an
// alias or the sweep is returned after the entry has been stored.
func (s *Store) Put(keys []string, e *Entry) error {
	if len(keys) == 0 {
		return newErr(Invalid, CodeBadKey, nil, "no key to store the entry under")
	}
	for _, k := range keys {
		if !validKey(k) {
			return badKey(k)
		}
	}
	if e == nil || len(e.Payload) == 0 {
		return newErr(Invalid, CodeBadEntry, nil, "the entry has no payload")
	}
	doc := *e
	now := s.now()
	if doc.StoredAt.IsZero() {
		doc.StoredAt = now
	}
	primary := keys[0]
	if err := s.writeEntry(primary, &doc, now); err != nil {
		return err
	}
	removeSame(s.aliasPath(primary), nil)
	var errs []error
	done := map[string]bool{primary: true}
	for _, k := range keys[1:] {
		if done[k] {
			continue
		}
		done[k] = true
		if err := s.writeAlias(k, primary, now); err != nil {
			errs = append(errs, err)
			continue
		}
		removeSame(s.entryPath(k), nil)
	}
	if err := s.Sweep(); err != nil && !isBusy(err) {
		errs = append(errs, err)
	}
	return joinErrs(errs)
}

// Restamp marks the entry that key reaches as fetched at now, keeping its
// payload and validators: the origin answered a conditional request with
// 304 Not Modified.
func (s *Store) Restamp(key string, now time.Time) error {
	if !validKey(key) {
		return badKey(key)
	}
	primary, _, err := s.resolve(key)
	if primary == "" {
		if err != nil {
			return err
		}
		return newErr(NotFound, CodeMissing, nil, "no entry to restamp")
	}
	path := s.entryPath(primary)
	e, fi, err := s.readEntry(path, primary)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return newErr(NotFound, CodeMissing, nil, "no entry to restamp")
	case damaged(err):
		removeSame(path, fi)
		return corrupt(path, err)
	case err != nil:
		return ioErr(err, "cannot read %s", path)
	}
	e.StoredAt = now
	return s.writeEntry(primary, e, s.now())
}

// Delete removes the entry key reaches and, when key is an alias, the alias
// too. Nothing to delete is not an error.
func (s *Store) Delete(key string) error {
	if !validKey(key) {
		return badKey(key)
	}
	var errs []error
	rm := func(path string) {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, ioErr(err, "cannot delete %s", path))
		}
	}
	rm(s.entryPath(key))
	if data, _, err := readSmall(s.aliasPath(key), maxSmallFile); err == nil && validKey(string(data)) {
		rm(s.entryPath(string(data)))
	}
	rm(s.aliasPath(key))
	return joinErrs(errs)
}

func isBusy(err error) bool {
	e, ok := AsError(err)
	return ok && e.Kind == Busy
}

// joinErrs returns nil for no errors, the error itself for one, and an IO
// *Error carrying them all for more.
func joinErrs(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = strings.TrimPrefix(err.Error(), "fetch cache: ")
	}
	return &Error{Kind: IO, Code: CodeIO, Message: "fetch cache: " + strings.Join(msgs, "; "), Err: errors.Join(errs...)}
}

// readEntry reads and fully decodes the entry for key at path, checking
// the bounds, the gzip checksum and that nothing follows the document. On
// an error the FileInfo, when not nil, is the file that was refused.
func (s *Store) readEntry(path, key string) (*Entry, fs.FileInfo, error) {
	f, fi, err := openRegular(path, s.maxEntry)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	var in inflater
	zr, err := in.reset(f)
	if err != nil {
		return nil, fi, err
	}
	h, payload, err := decodeDocument(&boundedReader{r: zr, n: s.maxEntry}, key, true)
	if err != nil {
		return nil, fi, err
	}
	return &Entry{StoredAt: h.StoredAt, ETag: h.ETag, LastModified: h.LastModified, Payload: payload}, fi, nil
}
