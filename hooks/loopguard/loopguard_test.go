package loopguard

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func decode(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":{"d":[3,2,1],"c":null}}`, `{"a":{"c":null,"d":[3,2,1]},"b":1}`},
		{`{"x":1.50,"y":1e3,"z":-0}`, `{"x":1.50,"y":1e3,"z":-0}`},
		{`"<a&b>\u2028"`, "\"<a&b>\u2028\""},
		{`"q\"b\\n\n\t\u0001"`, `"q\"b\\n\u000a\u0009\u0001"`},
		{` [ true , false ] `, `[true,false]`},
		{`{"é":1,"e":2,"":3}`, `{"":3,"e":2,"é":1}`},
	}
	for _, c := range cases {
		if got := string(canonical(decode(t, c.in))); got != c.want {
			t.Errorf("canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(tool, s string) string { return fingerprint(tool, decode(t, s)) }
	if fp("read", `{"a":1,"b":2}`) != fp("read", `{"b":2,"a":1}`) {
		t.Error("key order changed the fingerprint")
	}
	distinct := [][2]string{
		{"read", `{"a":1}`}, {"grep", `{"a":1}`}, {"read", `{"a":1.0}`}, {"read", `{"a":"1"}`},
		{"read", `["x","y"]`}, {"read", `["y","x"]`}, {"read", `null`}, {"read", `{}`}, {"read", `""`},
		{"rea", `"d{}"`}, {"read", `{"a":[1]}`}, {"read", `{"a":"<"}`}, {"read", `{"a":"\u003c "}`},
	}
	seen := map[string]string{}
	for _, d := range distinct {
		f := fp(d[0], d[1])
		if len(f) != 32 {
			t.Fatalf("fingerprint %q is not 32 hex digits", f)
		}
		if prev, ok := seen[f]; ok {
			t.Errorf("%v and %s share a fingerprint", d, prev)
		}
		seen[f] = fmt.Sprint(d)
	}
	if strings.HasPrefix(untrackedPrefix, "0") || len(untrackedPrefix+"read") == 32 {
		t.Error("the untracked key could collide with a fingerprint")
	}
}

func TestStorePathLayout(t *testing.T) {
	root := t.TempDir()
	s := NewStore(root, StoreOptions{})
	p := s.Path("ses_../../etc/passwd")
	rel, err := filepath.Rel(root, p)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 4 || parts[0] != "loop" || parts[1] != "v1" || len(parts[2]) != 2 || !strings.HasPrefix(parts[3], parts[2]) || len(parts[3]) != 32+len(".json") || !strings.HasSuffix(parts[3], ".json") {
		t.Fatalf("path %q does not follow loop/v1/<aa>/<h>.json", rel)
	}
	if lockPath(p) != strings.TrimSuffix(p, ".json")+".lock" {
		t.Fatal("lock path")
	}
}

func TestStoreRecordHoldsHashesOnly(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	g := &Guard{Store: s}
	secret := "SECRET-ARGUMENT-VALUE"
	if _, err := g.Before("read", "sess", map[string]any{"filePath": secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.After("read", "sess", map[string]any{"filePath": secret}, "SECRET-OUTPUT"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Path("sess"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "SECRET") {
		t.Fatalf("state file holds arguments or output: %s", data)
	}
	var raw map[string]any
	json.Unmarshal(data, &raw)
	for _, k := range []string{"version", "session", "updatedAt", "last"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("record lacks %q: %s", k, data)
		}
	}
}

func touch(t *testing.T, p string, mod time.Time) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, mod, mod)
}

func TestGC(t *testing.T) {
	now := time.Now()
	s := NewStore(t.TempDir(), StoreOptions{Now: func() time.Time { return now }})
	// 3 old sessions, maxSessions+5 recent ones, a stale temp file, an
	// orphaned lock, and a fresh temp file that must stay.
	for i := 0; i < 3; i++ {
		touch(t, s.Path(fmt.Sprint("old", i)), now.Add(-maxAge-time.Hour))
	}
	for i := 0; i < maxSessions+5; i++ {
		touch(t, s.Path(fmt.Sprint("new", i)), now.Add(-time.Duration(i)*time.Minute))
	}
	stale := filepath.Join(filepath.Dir(s.Path("new0")), ".x.json.tmp-123")
	touch(t, stale, now.Add(-2*time.Hour))
	fresh := filepath.Join(filepath.Dir(s.Path("new0")), ".y.json.tmp-456")
	touch(t, fresh, now)
	orphan := lockPath(s.Path("gone"))
	touch(t, orphan, now.Add(-2*time.Hour))

	removed, err := s.gc()
	if err != nil {
		t.Fatal(err)
	}
	if removed != 3+5 {
		t.Errorf("removed %d session files, want 8", removed)
	}
	for i := 0; i < 3; i++ {
		if _, err := os.Stat(s.Path(fmt.Sprint("old", i))); !os.IsNotExist(err) {
			t.Errorf("old session %d kept", i)
		}
	}
	for i := 0; i < maxSessions+5; i++ {
		_, err := os.Stat(s.Path(fmt.Sprint("new", i)))
		if kept := err == nil; kept != (i < maxSessions) {
			t.Errorf("session new%d kept=%v", i, kept)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale temp file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("fresh temp file removed")
	}
	if _, err := os.Stat(orphan); runtime.GOOS != "windows" && !os.IsNotExist(err) {
		t.Error("orphaned lock kept")
	}
	if n := countJSON(s.Dir()); n != maxSessions {
		t.Errorf("%d sessions left, want %d", n, maxSessions)
	}
}

func countJSON(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}

func TestMaybeGCRunsHourly(t *testing.T) {
	now := time.Now()
	s := NewStore(t.TempDir(), StoreOptions{Now: func() time.Time { return now }})
	old := s.Path("old")
	touch(t, old, now.Add(-maxAge-time.Hour))
	s.maybeGC()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("first sweep did not run")
	}
	touch(t, old, now.Add(-maxAge-time.Hour))
	now = now.Add(30 * time.Minute)
	s.maybeGC()
	if _, err := os.Stat(old); err != nil {
		t.Fatal("swept again within the hour")
	}
	now = now.Add(31 * time.Minute)
	s.maybeGC()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("no sweep after the hour")
	}
}

func TestDeleteAndLockTimeout(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{LockTimeout: 50 * time.Millisecond})
	g := &Guard{Store: s}
	g.After("read", "s", map[string]any{}, "out")
	if existed, err := g.Reset("s"); err != nil || !existed {
		t.Fatalf("reset: %v %v", existed, err)
	}
	if existed, err := g.Reset("s"); err != nil || existed {
		t.Fatalf("second reset: %v %v", existed, err)
	}
	if _, err := os.Stat(lockPath(s.Path("s"))); runtime.GOOS != "windows" && !os.IsNotExist(err) {
		t.Error("reset left the lock file")
	}
	// Hold the session lock from another handle: after gives up in time,
	// and before, which takes no lock, does not wait at all.
	other := NewStore(s.dir[:len(s.dir)-len("/loop/v1")], StoreOptions{LockTimeout: time.Second})
	held := make(chan struct{})
	release := make(chan struct{})
	go other.update("s", func(*State) bool { close(held); <-release; return false })
	<-held
	t0 := time.Now()
	_, berr := g.Before("read", "s", map[string]any{})
	waited := time.Since(t0)
	_, err := g.After("read", "s", map[string]any{}, "out")
	close(release)
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("after: err = %v, want a lock timeout", err)
	}
	if berr != nil || waited >= 50*time.Millisecond {
		t.Fatalf("before: err %v after %v; want an answer without waiting for the lock", berr, waited)
	}
}

func BenchmarkFingerprint(b *testing.B) {
	v := decode(b, `{"filePath":"/home/user/project/src/internal/server/handler.go","offset":120,"limit":200}`)
	for b.Loop() {
		fingerprint("read", v)
	}
}

// BenchmarkBeforeAfter is one read call through the store: before reads
// the record, after locks, reads and replaces it.
func BenchmarkBeforeAfter(b *testing.B) {
	g := &Guard{Store: NewStore(b.TempDir(), StoreOptions{})}
	args := map[string]any{"filePath": "a.go"}
	i := 0
	for b.Loop() {
		i++
		if _, err := g.Before("read", "s", args); err != nil {
			b.Fatal(err)
		}
		if _, err := g.After("read", "s", args, fmt.Sprint("out", i%2)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBefore is the before of a read in a session with a record: the
// checks of the state directories and one read of the file.
func BenchmarkBefore(b *testing.B) {
	g := &Guard{Store: NewStore(b.TempDir(), StoreOptions{})}
	args := map[string]any{"filePath": "a.go"}
	if _, err := g.After("read", "s", args, "out"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := g.Before("read", "s", args); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeState feeds arbitrary bytes as a session file: decoding never
// panics, and whatever it accepts survives the guard's next update.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"version":1,"session":"s","updatedAt":"2026-01-01T00:00:00Z","last":{"args":"ab","runs":3,"output":"cd"},"pending":{"c":{"args":"ab","createdAt":"2026-01-01T00:00:00Z"}}}`))
	f.Add([]byte(`{"version":1,"session":"s","last":{"runs":-1}}`))
	f.Add([]byte(`{"version":2,"session":"s"}`))
	f.Add([]byte(`{"version":1,"session":"s","pending":null}`))
	f.Add([]byte(`{"version":1,"session":"s"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, ok := decodeState(data, "s")
		if !ok {
			return
		}
		if st.Last.Runs < 0 {
			t.Fatalf("accepted an unusable record: %+v", st)
		}
		st.Last.Runs++
		if _, err := json.Marshal(st); err != nil {
			t.Fatalf("accepted record does not encode: %v", err)
		}
	})
}
