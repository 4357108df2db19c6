package cache

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"time"
)

// The negative probe cache remembers, per origin, that no llms.txt was
// found there, so the next fetch from a documentation host does not spend
// its requests and time budget probing again. It is kept for NegativeTTL
// (an hour by default): long enough to cover a burst of fetches, short
// enough that a site which adds the file is noticed. The caller decides
// what counts as "not found" (every candidate answering 404 or 410, say);
// the store only remembers it.

func (s *Store) probePath(origin string) string {
	return filepath.Join(s.neg, Key(origin)+".json")
}

// NegativeProbe reports whether origin was recorded by PutNegativeProbe
// within NegativeTTL. Any failure to read the record counts as no record;
// an expired or corrupt record is removed.
func (s *Store) NegativeProbe(origin string) bool {
	if origin == "" || len(origin) > maxOrigin {
		return false
	}
	path := s.probePath(origin)
	p, fi, err := readProbe(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case damaged(err):
		removeSame(path, fi)
		return false
	case err != nil:
		return false
	}
	if p.Origin != origin || !s.probeValid(p, s.now()) {
		removeSame(path, fi)
		return false
	}
	return true
}

// PutNegativeProbe records that origin has no llms.txt, as of now.
func (s *Store) PutNegativeProbe(origin string) error {
	if origin == "" || len(origin) > maxOrigin {
		return newErr(Invalid, CodeBadKey, nil, "the origin is empty or longer than %d bytes", maxOrigin)
	}
	now := s.now()
	data, err := json.Marshal(probe{V: version, Origin: origin, StoredAt: now.UTC()})
	if err != nil {
		return newErr(Invalid, CodeBadEntry, err, "cannot encode the probe record")
	}
	err = s.writeAtomic(s.neg, filepath.Base(s.probePath(origin)), now, maxSmallFile, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil && !isCacheError(err) {
		return ioErr(err, "cannot store the probe record")
	}
	return err
}

// probeValid reports whether p still holds at now: written within
// NegativeTTL and not in the future beyond the clock skew allowance.
func (s *Store) probeValid(p probe, now time.Time) bool {
	age := now.Sub(p.StoredAt)
	return age >= -clockSkew && age < s.negTTL
}

// readProbe reads and decodes a probe record.
func readProbe(path string) (probe, fs.FileInfo, error) {
	var p probe
	data, fi, err := readSmall(path, maxSmallFile)
	if err != nil {
		return p, fi, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fi, err
	}
	if p.V != version || p.Origin == "" || p.StoredAt.IsZero() {
		return p, fi, errors.New("not a probe record of this version")
	}
	return p, fi, nil
}
