package fetch

import (
	"encoding/json"
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
func keyFor(u string, r Request) string {
	return cache.Key("fetch", u, strconv.FormatBool(r.ExtractMain), string(r.PreferLLMs), strconv.FormatBool(r.SaveBinary))
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
	var e entry
	if json.Unmarshal(ce.Payload, &e) != nil || e.Kind == "" {
		_ = c.s.Delete(key)
		return nil, false
	}
	return &e, state == cache.Fresh
}

func (c *cacheStore) put(keys []string, e *entry) {
	if c == nil {
		return
	}
	cp := *e
	cp.compact()
	b, err := json.Marshal(&cp)
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
