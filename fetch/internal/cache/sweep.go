package cache

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slimgate/slim/internal/filelock"
)

// lockName is the sweep lock's file, in the version directory.
const lockName = ".sweep.lock"

// Sweep tidies the cache. Only one process sweeps at a time: when another
// holds the lock, Sweep returns at once with a Busy error and changes
// nothing. Otherwise it deletes
//
//   - entries and negative probes that a lookup would no longer use
//     (expired, or expired without a validator) and files that do not
//     decode;
//   - temporary files more than an hour old, which a killed writer left;
//   - aliases whose entry is gone;
//
// and then, while the files together take more than MaxBytes, the least
// recently used entries and probes (by modification time, which a hit
// renews) until they take less than 80% of it, with the aliases of the
// entries it deleted. Other processes may write and delete files during a
// sweep; a file that vanishes under it is simply skipped. Each file is
// handled on its own: an error is collected and the sweep goes on.
func (s *Store) Sweep() error {
	lock, err := filelock.Acquire(filepath.Join(s.root, lockName), 0)
	if errors.Is(err, filelock.ErrTimeout) {
		return newErr(Busy, CodeSweepBusy, nil, "another process is sweeping the cache")
	}
	if err != nil {
		return ioErr(err, "cannot take the sweep lock")
	}
	defer lock.Unlock()
	w := sweep{s: s, now: s.now(), wall: time.Now()}
	w.entries()
	w.probes()
	w.aliases()
	w.evict()
	return joinErrs(w.errs)
}

// sweep is one run of Sweep.
type sweep struct {
	s *Store
	// now is the store's clock, for entry ages; wall is the real time,
	// which the file system stamps temporary files with.
	now, wall time.Time
	total     int64
	victims   []victim // entries and probes that eviction may delete
	links     []link
	errs      []error
	in        inflater
}

type victim struct {
	path  string
	fi    fs.FileInfo
	entry string // the key, for an entry; "" for a probe
}

type link struct {
	path, target string
	fi           fs.FileInfo
}

// list returns the names in dir, or records why it cannot.
func (w *sweep) list(dir string) []fs.DirEntry {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		w.errs = append(w.errs, ioErr(err, "cannot list %s", dir))
	}
	return des
}

// temp handles a temporary file: deleted when old, else counted. It
// reports whether name was one.
func (w *sweep) temp(dir string, de fs.DirEntry) bool {
	if !strings.HasPrefix(de.Name(), tempPrefix) {
		return false
	}
	fi, err := de.Info()
	if err != nil {
		return true // gone: renamed into place or removed by its writer
	}
	path := filepath.Join(dir, de.Name())
	if w.wall.Sub(fi.ModTime()) > tempMaxAge {
		w.remove(path, fi)
	} else {
		w.total += fi.Size()
	}
	return true
}

// remove deletes path if it is still fi, recording a failure.
func (w *sweep) remove(path string, fi fs.FileInfo) bool {
	ok, err := removeSame(path, fi)
	if err != nil {
		w.errs = append(w.errs, ioErr(err, "cannot delete %s", path))
	}
	return ok
}

func (w *sweep) entries() {
	for _, de := range w.list(w.s.entries) {
		if w.temp(w.s.entries, de) {
			continue
		}
		key, ok := strings.CutSuffix(de.Name(), ".json.gz")
		if !ok || !validKey(key) {
			continue
		}
		path := filepath.Join(w.s.entries, de.Name())
		h, fi, err := w.s.readHeader(path, key, &w.in)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case damaged(err) && fi != nil:
			w.remove(path, fi)
		case err != nil:
			w.errs = append(w.errs, ioErr(err, "cannot read %s", path))
		case w.s.state(h, w.now) == Miss:
			w.remove(path, fi)
		default:
			w.total += fi.Size()
			w.victims = append(w.victims, victim{path: path, fi: fi, entry: key})
		}
	}
}

func (w *sweep) probes() {
	for _, de := range w.list(w.s.neg) {
		if w.temp(w.s.neg, de) {
			continue
		}
		hash, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || !validKey(hash) {
			continue
		}
		path := filepath.Join(w.s.neg, de.Name())
		p, fi, err := readProbe(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case damaged(err) && fi != nil:
			w.remove(path, fi)
		case err != nil:
			w.errs = append(w.errs, ioErr(err, "cannot read %s", path))
		case Key(p.Origin) != hash || !w.s.probeValid(p, w.now):
			w.remove(path, fi)
		default:
			w.total += fi.Size()
			w.victims = append(w.victims, victim{path: path, fi: fi})
		}
	}
}

func (w *sweep) aliases() {
	for _, de := range w.list(w.s.alias) {
		if w.temp(w.s.alias, de) || !validKey(de.Name()) {
			continue
		}
		path := filepath.Join(w.s.alias, de.Name())
		data, fi, err := readSmall(path, maxSmallFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err == nil && !validKey(string(data)), damaged(err) && fi != nil:
			w.remove(path, fi)
			continue
		case err != nil:
			w.errs = append(w.errs, ioErr(err, "cannot read %s", path))
			continue
		}
		target := string(data)
		// Looked up now rather than in the listing above, so an entry
		// written since then keeps its alias.
		if _, err := os.Lstat(w.s.entryPath(target)); errors.Is(err, fs.ErrNotExist) {
			w.remove(path, fi)
			continue
		}
		w.total += fi.Size()
		w.links = append(w.links, link{path: path, target: target, fi: fi})
	}
}

// evict deletes the least recently used entries and probes while the total
// is over the cap, until it is under the goal.
func (w *sweep) evict() {
	if w.total <= w.s.maxBytes {
		return
	}
	goal := w.s.maxBytes * sweepGoal / 10
	sort.Slice(w.victims, func(i, j int) bool {
		a, b := w.victims[i], w.victims[j]
		if !a.fi.ModTime().Equal(b.fi.ModTime()) {
			return a.fi.ModTime().Before(b.fi.ModTime())
		}
		return a.path < b.path
	})
	gone := map[string]bool{}
	for _, v := range w.victims {
		if w.total <= goal {
			break
		}
		if w.remove(v.path, v.fi) {
			w.total -= v.fi.Size()
			if v.entry != "" {
				gone[v.entry] = true
			}
		}
	}
	for _, l := range w.links {
		if gone[l.target] && w.remove(l.path, l.fi) {
			w.total -= l.fi.Size()
		}
	}
}

// readHeader reads the header of the entry for key at path, decompressing
// only as far as the payload.
func (s *Store) readHeader(path, key string, in *inflater) (header, fs.FileInfo, error) {
	f, fi, err := openRegular(path, s.maxEntry)
	if err != nil {
		return header{}, fi, err
	}
	defer f.Close()
	zr, err := in.reset(f)
	if err != nil {
		return header{}, fi, err
	}
	h, _, err := decodeDocument(&boundedReader{r: zr, n: s.maxEntry}, key, false)
	return h, fi, err
}
