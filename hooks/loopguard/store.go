package loopguard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/internal/atomicfile"
	"github.com/slimgate/slim/internal/filelock"
	"github.com/slimgate/slim/internal/statedir"
)

// Store limits and timings.
const (
	defaultLockTimeout = 2 * time.Second
	gcInterval         = time.Hour
	maxAge             = 7 * 24 * time.Hour
	maxSessions        = 512
	// maxFileSize bounds a session file that is read: a larger one is
	// treated as an empty session without being read. A record is about
	// 200 bytes (one of an older slim, with its map of pending calls, at
	// most about 150 KiB), so real files stay far below it.
	maxFileSize = 1 << 20
	// staleTemp is when a leftover temporary file (a writer killed between
	// create and rename) or an orphaned lock file may be swept.
	staleTemp = time.Hour
)

// Store keeps one small JSON file per session under
// <root>/loop/v1/<aa>/<h>.json, h being the first 32 hex digits of
// sha256(sessionID) and aa its first two, with the lock file <h>.lock beside
// it. Every read-modify-write holds the lock; every write replaces the file
// atomically, so a process killed at any moment leaves a readable file, and
// a reader that only looks (peek, for a before) needs no lock: it opens
// either the old file or the new one, never a mix.
//
// Nothing planted in the store can hang or crash a hook: the state root
// must pass statedir.Prepare, the directories below it must be real
// directories, session and lock files are opened without following links
// and without blocking, and only regular files are used, session files up
// to 1 MiB. A session file that fails these checks reads as an empty
// session (and is replaced on the next write); a lock file or directory
// that fails them makes the update fail, which the guard's callers treat as
// a pass.
type Store struct {
	root        string
	dir         string // <root>/loop/v1
	lockTimeout time.Duration
	now         func() time.Time
	log         zerolog.Logger
	ready       atomic.Bool // root and dir checked
}

// StoreOptions tune a Store; zero values take the defaults.
type StoreOptions struct {
	LockTimeout time.Duration    // the wait for a session's lock; 2 s by default
	Now         func() time.Time // the clock; time.Now by default
	Log         zerolog.Logger
}

// NewStore returns the store under the state root. Nothing touches the
// disk until the first update.
func NewStore(root string, o StoreOptions) *Store {
	s := &Store{root: root, dir: filepath.Join(root, "loop", "v1"), lockTimeout: o.LockTimeout, now: o.Now, log: o.Log}
	if s.lockTimeout == 0 {
		s.lockTimeout = defaultLockTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Dir is <root>/loop/v1.
func (s *Store) Dir() string { return s.dir }

// Path returns the session file of sessionID.
func (s *Store) Path(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	h := hex.EncodeToString(sum[:16])
	return filepath.Join(s.dir, h[:2], h+".json")
}

func lockPath(statePath string) string { return strings.TrimSuffix(statePath, ".json") + ".lock" }

// prepare checks the state root and creates or checks the directories down
// to the shard of statePath. The root and <root>/loop/v1 are checked once
// per Store.
func (s *Store) prepare(statePath string) error {
	if !s.ready.Load() {
		if err := statedir.Prepare(s.root); err != nil {
			return err
		}
		if err := statedir.EnsureDir(s.root, filepath.Join("loop", "v1")); err != nil {
			return err
		}
		s.ready.Store(true)
	}
	return statedir.EnsureDir(s.dir, filepath.Base(filepath.Dir(statePath)))
}

// update runs fn on the session's record under the session lock and writes
// the record back when fn reports a change. A missing, torn or corrupt file
// is read as an empty session (and rewritten).
func (s *Store) update(sessionID string, fn func(st *State) (changed bool)) error {
	path := s.Path(sessionID)
	if err := s.prepare(path); err != nil {
		return fmt.Errorf("loop guard state: %w", err)
	}
	lk, err := filelock.Acquire(lockPath(path), s.lockTimeout)
	if err != nil {
		return fmt.Errorf("loop guard state: %w", err)
	}
	defer lk.Unlock()
	st := s.load(path, sessionID)
	if !fn(st) {
		return nil
	}
	st.UpdatedAt = s.now().UTC()
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("loop guard state: encode: %w", err)
	}
	if err := atomicfile.Replace(path, data, 0o600); err != nil {
		return fmt.Errorf("loop guard state: %w", err)
	}
	lk.Unlock()
	s.maybeGC()
	return nil
}

// peek reads a session's record for a before: without the lock and without
// creating or writing anything. What prepare checks is checked here too (the
// state root must be safe, the directories below it real directories), but
// a root or directory that does not exist means there is no record yet, and
// gives the empty session. The file itself is read as load reads it.
func (s *Store) peek(sessionID string) (*State, error) {
	path := s.Path(sessionID)
	if err := s.check(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return newState(sessionID), nil
		}
		return nil, fmt.Errorf("loop guard state: %w", err)
	}
	return s.load(path, sessionID), nil
}

// check is prepare without creating anything: the state root must pass
// statedir.Prepare (which creates nothing when the root exists) and every
// directory below it down to the shard of statePath must be a real
// directory, not a link. A missing root or directory gives an error
// matching fs.ErrNotExist.
func (s *Store) check(statePath string) error {
	if _, err := os.Lstat(s.root); err != nil {
		return err
	}
	if err := statedir.Prepare(s.root); err != nil {
		return err
	}
	p := s.root
	for _, part := range []string{"loop", "v1", filepath.Base(filepath.Dir(statePath))} {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return &statedir.DirError{Path: p, Why: "is a symbolic link"}
		case !fi.IsDir():
			return &statedir.DirError{Path: p, Why: "is not a directory"}
		}
	}
	return nil
}

// Load reads a session's record without locking (for inspection and tests).
func (s *Store) Load(sessionID string) *State { return s.load(s.Path(sessionID), sessionID) }

func (s *Store) load(path, sessionID string) *State {
	data, err := statedir.ReadFile(path, maxFileSize)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn().Err(err).Str("file", path).Msg("loop guard: cannot use session state; starting empty")
		}
		return newState(sessionID)
	}
	st, ok := decodeState(data, sessionID)
	if !ok {
		s.log.Warn().Str("file", path).Int("bytes", len(data)).Msg("loop guard: session state is corrupt; starting empty")
		return newState(sessionID)
	}
	return st
}

// Delete removes a session's record (session.deleted, `slim loop reset`).
// It reports whether a record existed.
func (s *Store) Delete(sessionID string) (bool, error) {
	path := s.Path(sessionID)
	if err := s.prepare(path); err != nil {
		return false, fmt.Errorf("loop guard reset: %w", err)
	}
	lk, err := filelock.Acquire(lockPath(path), s.lockTimeout)
	if err != nil {
		return false, fmt.Errorf("loop guard reset: %w", err)
	}
	rerr := os.Remove(path)
	existed := rerr == nil
	if errors.Is(rerr, fs.ErrNotExist) {
		rerr = nil
	}
	if err := errors.Join(rerr, lk.RemoveAndUnlock()); err != nil {
		return existed, fmt.Errorf("loop guard reset: %w", err)
	}
	return existed, nil
}

// maybeGC sweeps the store at most once per gcInterval, guarded by the
// mtime of <dir>/gc.stamp; errors are logged and otherwise ignored.
func (s *Store) maybeGC() {
	stamp := filepath.Join(s.dir, "gc.stamp")
	now := s.now()
	if stampFresh(stamp, now) {
		return
	}
	lk, err := filelock.Acquire(filepath.Join(s.dir, "gc.lock"), 0)
	if err != nil {
		return // another process is sweeping
	}
	defer lk.Unlock()
	if stampFresh(stamp, now) {
		return
	}
	if err := atomicfile.WriteFile(stamp, []byte(now.UTC().Format(time.RFC3339)+"\n"), 0o600); err != nil {
		s.log.Warn().Err(err).Msg("loop guard: cannot write gc stamp")
		return
	}
	os.Chtimes(stamp, now, now)
	n, err := s.gc()
	if err != nil {
		s.log.Warn().Err(err).Msg("loop guard: sweep failed")
	}
	s.log.Debug().Int("removed", n).Msg("loop guard: swept session files")
}

// stampFresh reports whether the gc stamp was touched less than gcInterval
// from now, in either direction (a clock set back does not stop sweeps for
// long).
func stampFresh(stamp string, now time.Time) bool {
	fi, err := os.Lstat(stamp)
	return err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) < gcInterval && fi.ModTime().Sub(now) < gcInterval
}

type sessionFile struct {
	path string
	mod  time.Time
}

// gc deletes session files untouched for maxAge, then the oldest beyond
// maxSessions, plus leftover temporary files, orphaned lock files and
// anything but a regular file at a lock path (which no session can lock, so
// no process can be using it). A session whose lock is busy is skipped. It
// returns how many session files it removed.
func (s *Store) gc() (int, error) {
	now := s.now()
	shards, err := os.ReadDir(s.dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("loop guard sweep: %w", err)
	}
	var live []sessionFile
	removed := 0
	for _, sh := range shards {
		if !sh.IsDir() || len(sh.Name()) != 2 {
			continue
		}
		shardDir := filepath.Join(s.dir, sh.Name())
		ents, err := os.ReadDir(shardDir)
		if err != nil {
			continue
		}
		hasJSON := map[string]bool{}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
				hasJSON[strings.TrimSuffix(e.Name(), ".json")] = true
			}
		}
		for _, e := range ents {
			name := e.Name()
			p := filepath.Join(shardDir, name)
			fi, err := e.Info()
			if err != nil {
				continue
			}
			switch {
			case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"):
				if now.Sub(fi.ModTime()) > staleTemp {
					os.Remove(p)
				}
			case strings.HasSuffix(name, ".lock") && !fi.Mode().IsRegular() && !fi.IsDir():
				os.Remove(p) // a link or a pipe: removes the entry itself, never its target
			case strings.HasSuffix(name, ".lock"):
				if !hasJSON[strings.TrimSuffix(name, ".lock")] && now.Sub(fi.ModTime()) > staleTemp {
					if lk, err := filelock.Acquire(p, 0); err == nil {
						if _, err := os.Stat(strings.TrimSuffix(p, ".lock") + ".json"); errors.Is(err, fs.ErrNotExist) {
							lk.RemoveAndUnlock()
						} else {
							lk.Unlock()
						}
					}
				}
			case strings.HasSuffix(name, ".json"):
				if now.Sub(fi.ModTime()) > maxAge {
					if s.remove(p) {
						removed++
					}
					continue
				}
				live = append(live, sessionFile{p, fi.ModTime()})
			}
		}
	}
	if len(live) > maxSessions {
		sort.Slice(live, func(i, j int) bool { return live[i].mod.Before(live[j].mod) })
		for _, f := range live[:len(live)-maxSessions] {
			if s.remove(f.path) {
				removed++
			}
		}
	}
	return removed, nil
}

// remove deletes one session file and its lock, if nobody holds the lock.
func (s *Store) remove(path string) bool {
	lk, err := filelock.Acquire(lockPath(path), 0)
	if err != nil {
		return false
	}
	err = os.Remove(path)
	lk.RemoveAndUnlock()
	return err == nil
}
