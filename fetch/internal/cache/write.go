package cache

import (
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"
)

// writeEntry stores e's document as the entry for key, with mtime (its
// recency) set to now.
func (s *Store) writeEntry(key string, e *Entry, now time.Time) error {
	// A file that would take most of the cap would evict everything else
	// and then itself, so it is refused like an oversized one.
	fileMax := min(s.maxEntry, s.maxBytes*sweepGoal/10)
	head, rest, err := encodeDocument(key, e)
	if err != nil {
		return newErr(Invalid, CodeBadEntry, err, "cannot encode the entry")
	}
	if int64(len(head)+len(rest)) > s.maxEntry {
		err = errTooLarge
	} else {
		err = s.writeAtomic(s.entries, key+".json.gz", now, fileMax, func(w io.Writer) error {
			zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression)
			if err != nil {
				return err
			}
			if _, err := zw.Write(head); err != nil {
				return err
			}
			// Ends the compressed block here, so the header can be read
			// without decompressing the payload (see readHeader).
			if err := zw.Flush(); err != nil {
				return err
			}
			if _, err := zw.Write(rest); err != nil {
				return err
			}
			return zw.Close()
		})
	}
	if errors.Is(err, errTooLarge) {
		return newErr(Invalid, CodeTooLarge, nil,
			"the entry is too large to cache (at most %d bytes decompressed and %d compressed)", s.maxEntry, fileMax)
	}
	if err != nil && !isCacheError(err) {
		return ioErr(err, "cannot store an entry")
	}
	return err
}

// writeAlias makes key an alias of primary.
func (s *Store) writeAlias(key, primary string, now time.Time) error {
	err := s.writeAtomic(s.alias, key, now, maxSmallFile, func(w io.Writer) error {
		_, err := io.WriteString(w, primary)
		return err
	})
	if err != nil && !isCacheError(err) {
		return ioErr(err, "cannot store an alias")
	}
	return err
}

// writeAtomic replaces dir/name with what fill writes, at most max bytes,
// with mode 0600 and the given mtime. The bytes go to a new temporary file
// in dir (created exclusively, so it is never someone else's), which is
// closed and then renamed over the target: a reader opens either the old
// file or the complete new one, and a writer killed at any point leaves the
// old file and at most a temporary one. On any error the temporary file is
// removed and the target is left as it was. There is no fsync: losing the
// newest entry in a power cut costs one refetch.
func (s *Store) writeAtomic(dir, name string, mtime time.Time, max int64, fill func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return ioErr(err, "cannot create a file in %s", dir)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = fill(&limitWriter{w: f, n: max}); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return ioErr(err, "cannot write %s", tmp)
	}
	if err = os.Chtimes(tmp, mtime, mtime); err != nil {
		return ioErr(err, "cannot write %s", tmp)
	}
	if s.beforeRename != nil {
		s.beforeRename(tmp)
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return ioErr(err, "cannot store %s", filepath.Join(dir, name))
	}
	return nil
}

func isCacheError(err error) bool {
	_, ok := AsError(err)
	return ok
}
