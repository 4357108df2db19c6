package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/slimgate/slim/fetch/internal/cache"
)

// cacheStore is the fetch cache as Fetch uses it: best-effort, so a cache
// that cannot be opened, read or written is a miss, never an error. A nil
// store is no cache.
type cacheStore struct {
	s   *cache.Store
	now func() time.Time
}

func openCache(c CacheConfig, now func() time.Time) *cacheStore {
	if c.Dir == "" {
		return nil
	}
	s, err := cache.Open(cache.Options{Dir: c.Dir, TTL: c.TTL, MaxStale: c.MaxStale, MaxBytes: c.MaxBytes, Now: now})
	if err != nil {
		return nil
	}
	return &cacheStore{s: s, now: now}
}

// keyFor is the cache key of a URL under the request's options that change
// the result (not the format, the prompt or the metadata switch, which
// only change how it is rendered).
func keyFor(u string, r Request, scope string) string {
	return cache.Key("fetch", u, strconv.FormatBool(r.ExtractMain), string(r.PreferLLMs), strconv.FormatBool(r.SaveBinary), scope)
}

// get returns the entry under key and whether it is fresh; a stale entry
// is returned only when it can be revalidated.
func (c *cacheStore) get(key string) (*entry, bool) {
	if c == nil {
		return nil, false
	}
	ce, state, err := c.s.Get(key)
	if err != nil || ce == nil || state == cache.Miss {
		return nil, false
	}
	e, err := decodeEntry(ce.Payload)
	if err != nil {
		_ = c.s.Delete(key)
		return nil, false
	}
	return e, state == cache.Fresh
}

func (c *cacheStore) put(keys []string, e *entry) {
	if c == nil {
		return
	}
	b, err := encodeEntry(e)
	if err != nil {
		return
	}
	_ = c.s.Put(keys, &cache.Entry{StoredAt: c.now(), ETag: e.ETag, LastModified: e.LastModified, Payload: b})
}

func (c *cacheStore) restamp(key string, _ *entry) {
	if c == nil {
		return
	}
	_ = c.s.Restamp(key, c.now())
}

func (c *cacheStore) negativeProbe(origin string) bool {
	return c != nil && c.s.NegativeProbe(origin)
}

func (c *cacheStore) putNegativeProbe(origin string) {
	if c != nil {
		_ = c.s.PutNegativeProbe(origin)
	}
}

// encodeEntry is an entry as the cache stores it: its fields as one line
// of JSON, then the three renderings as raw text, each after a line with
// its length. The renderings are most of an entry, and decoding them as
// JSON strings cost more than the rest of a cache hit.
func encodeEntry(e *entry) ([]byte, error) {
	cp := *e
	cp.compact()
	texts := [3]string{cp.Markdown, cp.Text, cp.HTML}
	cp.Markdown, cp.Text, cp.HTML = "", "", ""
	head, err := json.Marshal(&cp)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(head)+len(texts[0])+len(texts[1])+len(texts[2])+40)
	b = append(append(b, head...), '\n')
	for _, t := range texts {
		b = strconv.AppendInt(b, int64(len(t)), 10)
		b = append(append(b, '\n'), t...)
	}
	return b, nil
}

// decodeEntry undoes encodeEntry; anything else is an error.
func decodeEntry(b []byte) (*entry, error) {
	head, rest, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return nil, errBadEntry
	}
	var e entry
	if err := json.Unmarshal(head, &e); err != nil || e.Kind == "" {
		return nil, errBadEntry
	}
	var texts [3]string
	for i := range texts {
		num, after, ok := bytes.Cut(rest, []byte{'\n'})
		n, err := strconv.Atoi(string(num))
		if !ok || err != nil || n < 0 || n > len(after) {
			return nil, errBadEntry
		}
		texts[i], rest = string(after[:n]), after[n:]
	}
	if len(rest) != 0 {
		return nil, errBadEntry
	}
	e.Markdown, e.Text, e.HTML = texts[0], texts[1], texts[2]
	return &e, nil
}

var errBadEntry = errors.New("not a cached fetch entry")
