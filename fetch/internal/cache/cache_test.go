package cache

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const lastMod = "Wed, 21 Oct 2015 07:28:00 GMT"

func TestKeyIsAnUnambiguousHexHash(t *testing.T) {
	k := Key("https://example.com/", "true", "false")
	if !validKey(k) || k != Key("https://example.com/", "true", "false") {
		t.Fatalf("Key = %q: want 64 lower-case hex digits, the same every time", k)
	}
	distinct := [][]string{{"ab"}, {"a", "b"}, {"a", "", "b"}, {"", "ab"}, {"ab", ""}, {}, {""}, {"b", "a"}}
	seen := map[string]int{}
	for i, parts := range distinct {
		k := Key(parts...)
		if j, dup := seen[k]; dup {
			t.Errorf("Key(%q) == Key(%q)", parts, distinct[j])
		}
		seen[k] = i
	}
}

func TestFreshness(t *testing.T) {
	// The clock moves by "later" between the Put and the lookup; a
	// negative move is a clock that went back, so the entry's time lies in
	// the future.
	cases := []struct {
		name     string
		etag, lm string
		later    time.Duration
		want     State
	}{
		{"just stored is fresh", "", "", 0, Fresh},
		{"a second before the TTL is fresh", "", "", 15*time.Minute - time.Second, Fresh},
		{"at the TTL without a validator is a miss", "", "", 15 * time.Minute, Miss},
		{"expired with an ETag is stale", `"v1"`, "", 16 * time.Minute, Stale},
		{"expired with a Last-Modified is stale", "", lastMod, 16 * time.Minute, Stale},
		{"just inside MaxStale is stale", `"v1"`, "", 24*time.Hour - time.Second, Stale},
		{"at MaxStale even with validators is a miss", `"v1"`, lastMod, 24 * time.Hour, Miss},
		{"thirty seconds in the future is fresh", "", "", -30 * time.Second, Fresh},
		{"two minutes in the future with a validator is stale", `"v1"`, "", -2 * time.Minute, Stale},
		{"two minutes in the future without a validator is a miss", "", "", -2 * time.Minute, Miss},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c := open(t, nil)
			k := Key(tc.name)
			stored := c.Now()
			in := &Entry{ETag: tc.etag, LastModified: tc.lm, Payload: json.RawMessage(`{"body":"<p>x</p>"}`)}
			mustPut(t, s, in, k)
			c.Add(tc.later)
			e, st, err := s.Get(k)
			if err != nil || st != tc.want {
				t.Fatalf("Get = %v, %v; want %v", st, err, tc.want)
			}
			if tc.want == Miss {
				if e != nil || exists(s.entryPath(k)) {
					t.Fatalf("a miss returned %v and left its file %v", e, exists(s.entryPath(k)))
				}
				return
			}
			if !e.StoredAt.Equal(stored) || e.ETag != tc.etag || e.LastModified != tc.lm || string(e.Payload) != string(in.Payload) {
				t.Fatalf("Get = %+v, want %+v stored at %v", e, in, stored)
			}
		})
		t.Run(tc.name+"/the sweeper agrees", func(t *testing.T) {
			s, c := open(t, nil)
			k := Key(tc.name)
			mustPut(t, s, &Entry{ETag: tc.etag, LastModified: tc.lm, Payload: json.RawMessage(`1`)}, k)
			c.Add(tc.later)
			if err := s.Sweep(); err != nil {
				t.Fatal(err)
			}
			if kept := exists(s.entryPath(k)); kept != (tc.want != Miss) {
				t.Fatalf("after the sweep the entry exists = %v, want %v", kept, tc.want != Miss)
			}
		})
	}
}

func TestMaxStaleBelowTTLIsRaisedToTTL(t *testing.T) {
	s, c := open(t, func(o *Options) { o.TTL = time.Hour; o.MaxStale = time.Minute })
	k := Key("a")
	mustPut(t, s, &Entry{ETag: `"e"`, Payload: json.RawMessage(`1`)}, k)
	c.Add(59 * time.Minute)
	if _, st, _ := s.Get(k); st != Fresh {
		t.Fatalf("within the TTL: %v, want fresh", st)
	}
}

func TestAliases(t *testing.T) {
	a, b, c := Key("requested"), Key("final"), Key("canonical")
	p1, p2 := json.RawMessage(`{"n":1}`), json.RawMessage(`{"n":2}`)

	t.Run("every alias reaches the entry", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b, c, b)
		for _, k := range []string{a, b, c} {
			if e, st, err := s.Get(k); err != nil || st != Fresh || string(e.Payload) != string(p1) {
				t.Fatalf("Get(%.8s) = %v %v %v", k, e, st, err)
			}
		}
		if !exists(s.aliasPath(b)) || exists(s.entryPath(b)) || exists(s.aliasPath(a)) {
			t.Fatal("want one entry (the first key) and alias files for the others")
		}
	})
	t.Run("a dangling alias is a miss and is removed", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b)
		os.Remove(s.entryPath(a))
		if e, st, err := s.Get(b); e != nil || st != Miss || err != nil {
			t.Fatalf("Get = %v %v %v, want a plain miss", e, st, err)
		}
		if exists(s.aliasPath(b)) {
			t.Fatal("the dangling alias is still there")
		}
	})
	t.Run("only one level of alias is followed", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b)
		os.WriteFile(s.aliasPath(c), []byte(b), 0o600) // c -> b -> a
		if _, st, _ := s.Get(c); st != Miss {
			t.Fatalf("Get through two aliases = %v, want a miss", st)
		}
		if exists(s.aliasPath(c)) || !exists(s.aliasPath(b)) {
			t.Fatal("want the alias to an alias removed and the real alias kept")
		}
	})
	t.Run("an alias file without a key is corrupt and removed", func(t *testing.T) {
		s, _ := open(t, nil)
		os.WriteFile(s.aliasPath(b), []byte("../../etc/passwd"), 0o600)
		if _, st, err := s.Get(b); st != Miss || kindOf(err) != Corrupt {
			t.Fatalf("Get = %v %v, want a miss with a Corrupt error", st, err)
		}
		if exists(s.aliasPath(b)) {
			t.Fatal("the bad alias is still there")
		}
	})
	t.Run("storing under a former alias replaces the alias", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b)
		mustPut(t, s, &Entry{Payload: p2}, b)
		if e, _, _ := s.Get(b); e == nil || string(e.Payload) != string(p2) || exists(s.aliasPath(b)) {
			t.Fatalf("Get(b) = %v; alias left = %v", e, exists(s.aliasPath(b)))
		}
		if e, _, _ := s.Get(a); e == nil || string(e.Payload) != string(p1) {
			t.Fatalf("the old primary lost its own entry: %v", e)
		}
	})
	t.Run("a new alias replaces an older entry under that key", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, b)
		mustPut(t, s, &Entry{Payload: p2}, a, b)
		if e, _, _ := s.Get(b); e == nil || string(e.Payload) != string(p2) || exists(s.entryPath(b)) {
			t.Fatalf("Get(b) = %v, want the newer result through the alias", e)
		}
	})
	t.Run("delete through an alias removes the entry and the alias", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b, c)
		if err := s.Delete(b); err != nil {
			t.Fatal(err)
		}
		if exists(s.entryPath(a)) || exists(s.aliasPath(b)) {
			t.Fatal("entry or alias left after Delete")
		}
		if _, st, _ := s.Get(c); st != Miss || exists(s.aliasPath(c)) {
			t.Fatalf("the other alias: %v, left = %v", st, exists(s.aliasPath(c)))
		}
		if err := s.Delete(b); err != nil {
			t.Fatalf("deleting nothing: %v", err)
		}
	})
	t.Run("the sweeper removes dangling and bad aliases", func(t *testing.T) {
		s, _ := open(t, nil)
		mustPut(t, s, &Entry{Payload: p1}, a, b)
		mustPut(t, s, &Entry{Payload: p2}, Key("other"), c)
		os.Remove(s.entryPath(a))
		bad := s.aliasPath(Key("bad"))
		os.WriteFile(bad, []byte("not a key"), 0o600)
		if err := s.Sweep(); err != nil {
			t.Fatal(err)
		}
		if exists(s.aliasPath(b)) || exists(bad) || !exists(s.aliasPath(c)) {
			t.Fatalf("dangling left %v, bad left %v, live kept %v", exists(s.aliasPath(b)), exists(bad), exists(s.aliasPath(c)))
		}
	})
}

// gz compresses data.
func gz(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func docJSON(t *testing.T, key string, e *Entry) []byte {
	t.Helper()
	head, rest, err := encodeDocument(key, e)
	if err != nil {
		t.Fatal(err)
	}
	return append(head, rest...)
}

func TestCorruptEntriesAreMissesAndRemoved(t *testing.T) {
	// A payload that does not compress, so that half the file holds the
	// whole header.
	good := &Entry{StoredAt: newClock().Now(), ETag: `"v"`, Payload: signed("good", 0, 8000)}
	// Each case replaces the entry file with damaged bytes. sweeperSees
	// marks damage within the header, which the sweeper (reading only the
	// header) catches too; the rest is caught on the next Get.
	cases := []struct {
		name        string
		bytes       func(t *testing.T, key string, file []byte) []byte
		sweeperSees bool
	}{
		{"truncated to half", func(_ *testing.T, _ string, f []byte) []byte { return f[:len(f)/2] }, false},
		{"truncated inside the gzip header", func(_ *testing.T, _ string, f []byte) []byte { return f[:5] }, true},
		{"empty", func(*testing.T, string, []byte) []byte { return nil }, true},
		{"garbage", func(*testing.T, string, []byte) []byte { return []byte("\x00garbage\xff\xfe not gzip at all") }, true},
		{"gzip of something else", func(*testing.T, string, []byte) []byte { return gz([]byte(`[1,2,3]`)) }, true},
		{"another key inside", func(t *testing.T, _ string, _ []byte) []byte { return gz(docJSON(t, Key("other"), good)) }, true},
		{"another format version", func(t *testing.T, k string, _ []byte) []byte {
			return gz(bytes.Replace(docJSON(t, k, good), []byte(`"v":2`), []byte(`"v":1`), 1))
		}, true},
		{"a header line that never ends", func(t *testing.T, k string, _ []byte) []byte {
			d := docJSON(t, k, good)
			return gz(d[:bytes.IndexByte(d, '\n')])
		}, true},
		{"no time in the header", func(t *testing.T, k string, _ []byte) []byte {
			d := docJSON(t, k, good)
			i := bytes.Index(d, []byte(`,"stored_at"`))
			j := bytes.Index(d, []byte(`,"etag"`))
			return gz(append(append([]byte{}, d[:i]...), d[j:]...))
		}, true},
		{"an unknown field", func(t *testing.T, k string, _ []byte) []byte {
			return gz(bytes.Replace(docJSON(t, k, good), []byte(`"etag"`), []byte(`"xtag"`), 1))
		}, true},
		{"garbage after the gzip stream", func(_ *testing.T, _ string, f []byte) []byte { return append(f, "trailing"...) }, false},
		{"a wrong checksum", func(_ *testing.T, _ string, f []byte) []byte {
			f = bytes.Clone(f)
			f[len(f)-8] ^= 0xff
			return f
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := open(t, nil)
			k := Key(tc.name)
			mustPut(t, s, good, k)
			path := s.entryPath(k)
			orig, _ := os.ReadFile(path)
			os.WriteFile(path, tc.bytes(t, k, orig), 0o600)
			e, st, err := s.Get(k)
			if e != nil || st != Miss || kindOf(err) != Corrupt {
				t.Fatalf("Get = %v, %v, %v; want a miss with a Corrupt error", e, st, err)
			}
			if exists(path) {
				t.Fatal("the corrupt file is still there")
			}
			mustPut(t, s, good, k)
			if _, st, err := s.Get(k); st != Fresh || err != nil {
				t.Fatalf("after storing again: %v %v", st, err)
			}
		})
		t.Run(tc.name+"/sweep", func(t *testing.T) {
			s, _ := open(t, nil)
			k := Key(tc.name)
			mustPut(t, s, good, k)
			path := s.entryPath(k)
			orig, _ := os.ReadFile(path)
			os.WriteFile(path, tc.bytes(t, k, orig), 0o600)
			if err := s.Sweep(); err != nil {
				t.Fatal(err)
			}
			if gone := !exists(path); gone != tc.sweeperSees {
				t.Fatalf("after a sweep the file is gone = %v, want %v", gone, tc.sweeperSees)
			}
		})
	}
}

func TestReadsAreBounded(t *testing.T) {
	s, c := open(t, func(o *Options) { o.MaxEntryBytes = 4096 })
	k := Key("big")
	e := &Entry{StoredAt: c.Now(), Payload: json.RawMessage(`"` + strings.Repeat("a", 100_000) + `"`)}
	bomb := gz(docJSON(t, k, e)) // small on disk, large once decompressed
	if len(bomb) > 4096 {
		t.Fatalf("test setup: %d compressed bytes", len(bomb))
	}
	os.WriteFile(s.entryPath(k), bomb, 0o600)
	if _, st, err := s.Get(k); st != Miss || kindOf(err) != Corrupt || exists(s.entryPath(k)) {
		t.Fatalf("decompressing past the bound: %v %v", st, err)
	}
	os.WriteFile(s.entryPath(k), bytes.Repeat([]byte{0x1f}, 5000), 0o600)
	if _, st, err := s.Get(k); st != Miss || !errors.Is(err, errTooLarge) || exists(s.entryPath(k)) {
		t.Fatalf("a file past the bound: %v %v", st, err)
	}
	if err := s.Put([]string{k}, e); kindOf(err) != Invalid {
		t.Fatalf("storing past the bound: %v", err)
	}
	if exists(s.entryPath(k)) || len(temps(t, s.root)) != 0 {
		t.Fatal("a refused entry left files")
	}
}

func TestPutRefusesWhatItCannotStore(t *testing.T) {
	k := Key("k")
	cases := []struct {
		name string
		keys []string
		e    *Entry
	}{
		{"no key", nil, &Entry{Payload: json.RawMessage(`1`)}},
		{"a key that is not a hash", []string{"page"}, &Entry{Payload: json.RawMessage(`1`)}},
		{"an upper-case key", []string{strings.ToUpper(k)}, &Entry{Payload: json.RawMessage(`1`)}},
		{"a path as an alias", []string{k, "../../" + k[6:]}, &Entry{Payload: json.RawMessage(`1`)}},
		{"no entry", []string{k}, nil},
		{"no payload", []string{k}, &Entry{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := open(t, nil)
			if err := s.Put(tc.keys, tc.e); kindOf(err) != Invalid {
				t.Fatalf("Put = %v, want an Invalid error", err)
			}
			for p := range treeFiles(t, s.root) {
				t.Errorf("left %s", p)
			}
		})
	}
	s, _ := open(t, nil)
	for _, bad := range []string{"", "x", strings.Repeat("g", 64), "../" + k} {
		if _, _, err := s.Get(bad); kindOf(err) != Invalid {
			t.Errorf("Get(%q) = %v", bad, err)
		}
		if err := s.Delete(bad); kindOf(err) != Invalid {
			t.Errorf("Delete(%q) = %v", bad, err)
		}
	}
}

func TestRestampRenewsAStaleEntry(t *testing.T) {
	s, c := open(t, nil)
	a, b := Key("a"), Key("b")
	in := &Entry{ETag: `"v1"`, LastModified: lastMod, Payload: json.RawMessage(`{"body":"same"}`)}
	mustPut(t, s, in, a, b)
	c.Add(20 * time.Minute)
	if _, st, _ := s.Get(b); st != Stale {
		t.Fatalf("before: %v, want stale", st)
	}
	if err := s.Restamp(b, c.Now()); err != nil {
		t.Fatal(err)
	}
	e, st, err := s.Get(a)
	if err != nil || st != Fresh || !e.StoredAt.Equal(c.Now()) || e.ETag != in.ETag || e.LastModified != in.LastModified || string(e.Payload) != string(in.Payload) {
		t.Fatalf("after: %+v %v %v", e, st, err)
	}
	if err := s.Restamp(Key("none"), c.Now()); kindOf(err) != NotFound {
		t.Fatalf("restamping nothing: %v", err)
	}
}

func TestNegativeProbe(t *testing.T) {
	const origin = "https://docs.example.com"
	s, c := open(t, nil)
	if s.NegativeProbe(origin) {
		t.Fatal("remembered before it was stored")
	}
	if err := s.PutNegativeProbe(origin); err != nil {
		t.Fatal(err)
	}
	if !s.NegativeProbe(origin) || s.NegativeProbe("https://docs.example.org") || s.NegativeProbe("http://docs.example.com") {
		t.Fatal("want the origin remembered, and only that origin")
	}
	c.Add(59 * time.Minute)
	if !s.NegativeProbe(origin) {
		t.Fatal("forgotten within the hour")
	}
	c.Add(time.Minute)
	if s.NegativeProbe(origin) || exists(s.probePath(origin)) {
		t.Fatal("still remembered (or its file kept) after an hour")
	}

	s.PutNegativeProbe(origin)
	c.Add(-2 * time.Minute)
	if s.NegativeProbe(origin) {
		t.Fatal("a record from the future (clock moved back) still counts")
	}

	s.PutNegativeProbe(origin)
	os.WriteFile(s.probePath(origin), []byte(`{"v":1,"origin":"https://other","stored_at":"`+c.Now().Format(time.RFC3339)+`"}`), 0o600)
	if s.NegativeProbe(origin) || exists(s.probePath(origin)) {
		t.Fatal("a record for another origin counts (or was kept)")
	}
	s.PutNegativeProbe(origin)
	os.WriteFile(s.probePath(origin), []byte(`{"v":1,`), 0o600)
	if s.NegativeProbe(origin) || exists(s.probePath(origin)) {
		t.Fatal("a corrupt record counts (or was kept)")
	}

	s.PutNegativeProbe(origin)
	s.PutNegativeProbe("https://b.example")
	c.Add(30 * time.Minute)
	s.PutNegativeProbe("https://c.example")
	c.Add(31 * time.Minute)
	if err := s.Sweep(); err != nil {
		t.Fatal(err)
	}
	if exists(s.probePath(origin)) || exists(s.probePath("https://b.example")) || !exists(s.probePath("https://c.example")) {
		t.Fatal("want the sweeper to remove the expired records and keep the live one")
	}
	if err := s.PutNegativeProbe(""); kindOf(err) != Invalid {
		t.Fatalf("empty origin: %v", err)
	}
}

func TestSizeCapKeepsTheMostRecentlyUsed(t *testing.T) {
	const capBytes = 200_000
	s, c := open(t, func(o *Options) { o.MaxBytes = capBytes })
	keys := make([]string, 10)
	for i := range keys {
		keys[i] = Key("page", string(rune('a'+i)))
	}
	alias := func(i int) string { return Key("final", string(rune('a'+i))) }
	mustPut(t, s, &Entry{Payload: signed("page", 0, 50_000)}, keys[0], alias(0))
	for i := 1; i < len(keys); i++ {
		c.Add(time.Second)
		// keys[0] is read before every write, so it stays the most
		// recently used of the older pages.
		if _, st, err := s.Get(keys[0]); st != Fresh || err != nil {
			t.Fatalf("before page %d the first page is %v (%v)", i, st, err)
		}
		c.Add(time.Second)
		before := len(treeFiles(t, s.entries))
		mustPut(t, s, &Entry{Payload: signed("page", i, 50_000)}, keys[i], alias(i))
		n := treeSize(t, s.root)
		if n > capBytes {
			t.Fatalf("after page %d the cache holds %d bytes, over the %d cap", i, n, capBytes)
		}
		if evicted := len(treeFiles(t, s.entries)) <= before; evicted && n > capBytes*8/10 {
			t.Fatalf("after evicting for page %d the cache holds %d bytes, want at most 80%% of the cap", i, n)
		}
		for j := 0; j <= i; j++ {
			if exists(s.aliasPath(alias(j))) != exists(s.entryPath(keys[j])) {
				t.Fatalf("after page %d: page %d's alias exists = %v, its entry %v", i, j, exists(s.aliasPath(alias(j))), exists(s.entryPath(keys[j])))
			}
		}
	}
	for _, k := range []string{keys[0], keys[7], keys[8], keys[9]} {
		if _, st, err := s.Get(k); st != Fresh || err != nil {
			t.Errorf("a recently used page was evicted: %v %v", st, err)
		}
	}
	for _, k := range keys[1:4] {
		if exists(s.entryPath(k)) {
			t.Error("an old page that was never read survived")
		}
	}
	if err := s.Put([]string{Key("huge")}, &Entry{Payload: signed("huge", 0, 300_000)}); kindOf(err) != Invalid {
		t.Fatalf("an entry larger than the cap allows: %v", err)
	}
}

func TestSweepRemovesOnlyOldTemporaryFiles(t *testing.T) {
	s, _ := open(t, nil)
	old := time.Now().Add(-tempMaxAge - time.Minute)
	var oldOnes, young []string
	for _, d := range []string{s.entries, s.alias, s.neg} {
		o, y := filepath.Join(d, tempPrefix+"old"), filepath.Join(d, tempPrefix+"young")
		os.WriteFile(o, []byte("partial"), 0o600)
		os.WriteFile(y, []byte("partial"), 0o600)
		os.Chtimes(o, old, old)
		oldOnes, young = append(oldOnes, o), append(young, y)
	}
	if err := s.Sweep(); err != nil {
		t.Fatal(err)
	}
	for _, p := range oldOnes {
		if exists(p) {
			t.Errorf("%s survived", p)
		}
	}
	for _, p := range young {
		if !exists(p) {
			t.Errorf("%s, possibly still being written, was removed", p)
		}
	}
}

func TestOpenRefusesBadOptionsAndDirectories(t *testing.T) {
	if _, err := Open(Options{}); kindOf(err) != Invalid {
		t.Errorf("no directory: %v", err)
	}
	if _, err := Open(Options{Dir: t.TempDir(), TTL: -time.Second}); kindOf(err) != Invalid {
		t.Errorf("negative TTL: %v", err)
	}
	file := filepath.Join(t.TempDir(), "cache")
	os.WriteFile(file, nil, 0o600)
	if _, err := Open(Options{Dir: file}); kindOf(err) != Unsafe {
		t.Errorf("a file as the root: %v", err)
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "v1"), 0o700)
	os.WriteFile(filepath.Join(root, "v1", "entries"), nil, 0o600)
	if _, err := Open(Options{Dir: root}); kindOf(err) != Unsafe {
		t.Errorf("a file where a directory belongs: %v", err)
	}
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestAHeaderIsReadWithoutInflatingThePayload(t *testing.T) {
	s, c := open(t, nil)
	k := Key("big")
	mustPut(t, s, &Entry{ETag: `"e"`, Payload: signed("big", 0, 1<<20)}, k)
	data, err := os.ReadFile(s.entryPath(k))
	if err != nil || len(data) < 500_000 {
		t.Fatalf("%d bytes, %v", len(data), err)
	}
	r := &countReader{r: bytes.NewReader(data)}
	var in inflater
	zr, err := in.reset(r)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := decodeDocument(zr, k, false)
	if err != nil || h.ETag != `"e"` || !h.StoredAt.Equal(c.Now()) {
		t.Fatalf("header %+v, %v", h, err)
	}
	if r.n > 4096 {
		t.Fatalf("reading the header took %d of the file's %d bytes", r.n, len(data))
	}
}
