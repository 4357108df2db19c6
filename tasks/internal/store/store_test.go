package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOpenCreatesAPrivateScopeDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tasks", "0123456789abcdef")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scope dir: %v %v, want a 0700 directory", fi.Mode(), err)
	}
	if s.Dir() != dir || s.Path() != filepath.Join(dir, DocumentName) {
		t.Fatalf("Dir %q Path %q", s.Dir(), s.Path())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Open wrote %v", ents)
	}
}

func TestOpenRefusesAScopeThatCannotBeTrusted(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(real, link)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	cases := map[string]string{"a symbolic link": link, "a file": file}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 54321, 54321)
		cases["another user's directory"] = other
	}
	for name, dir := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Open(dir, Options{}); !is(err, Unsafe, CodeDirUnsafe) {
				t.Fatalf("err = %v, want %s/%s", err, Unsafe, CodeDirUnsafe)
			}
		})
	}
	if ents, _ := os.ReadDir(real); len(ents) != 0 {
		t.Fatalf("something was written through the link: %v", ents)
	}
}

func TestOpenRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{{LockTimeout: -1}, {MaxBytes: -1}} {
		if _, err := Open(t.TempDir(), o); !is(err, Invalid, CodeBadOptions) {
			t.Fatalf("%+v: err = %v", o, err)
		}
	}
}

func TestOpenScopeChecksTheStateRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	project := t.TempDir()
	s, err := OpenScope(root, project, "http://127.0.0.1:4096", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != ScopeDir(root, project, "http://127.0.0.1:4096") {
		t.Fatalf("opened %s", s.Dir())
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if _, err := OpenScope(open, project, "u", Options{}); !is(err, Unsafe, CodeDirUnsafe) {
		t.Fatalf("a state root others can write: err = %v", err)
	}
	planted := filepath.Join(t.TempDir(), "state")
	os.Mkdir(planted, 0o700)
	os.Symlink(t.TempDir(), filepath.Join(planted, "tasks"))
	if _, err := OpenScope(planted, project, "u", Options{}); !is(err, Unsafe, CodeDirUnsafe) {
		t.Fatalf("a link at tasks: err = %v", err)
	}
}

func TestScopeDirNamesOneScopePerProjectAndServer(t *testing.T) {
	root := "/state"
	project := t.TempDir()
	link := filepath.Join(t.TempDir(), "via-link")
	if err := os.Symlink(project, link); err != nil {
		t.Fatal(err)
	}
	base := ScopeDir(root, project, "http://127.0.0.1:4096")
	if filepath.Dir(base) != filepath.Join(root, "tasks") || len(filepath.Base(base)) != 16 || strings.Trim(filepath.Base(base), "0123456789abcdef") != "" {
		t.Fatalf("ScopeDir = %s, want /state/tasks/<16 hex digits>", base)
	}
	same := map[string]string{
		"through a symbolic link": ScopeDir(root, link, "http://127.0.0.1:4096"),
		"with a trailing slash":   ScopeDir(root, project+"/", "http://127.0.0.1:4096"),
		"with a dot component":    ScopeDir(root, filepath.Join(project, "."), "http://127.0.0.1:4096"),
		"with the URL's slash":    ScopeDir(root, project, "http://127.0.0.1:4096/"),
	}
	for name, got := range same {
		if got != base {
			t.Errorf("%s: %s, want %s", name, got, base)
		}
	}
	other := map[string]string{
		"another server":  ScopeDir(root, project, "http://127.0.0.1:4097"),
		"another project": ScopeDir(root, t.TempDir(), "http://127.0.0.1:4096"),
	}
	for name, got := range other {
		if got == base {
			t.Errorf("%s shares the scope %s", name, got)
		}
	}
	// A project that does not exist (yet) still gets a stable, absolute
	// scope.
	missing := filepath.Join(t.TempDir(), "missing")
	if a, b := ScopeDir(root, missing, "u"), ScopeDir(root, missing+"/", "u"); a != b {
		t.Errorf("a missing project: %s and %s", a, b)
	}
}

func TestAMissingDocumentReadsAsAnEmptyState(t *testing.T) {
	s := openT(t, Options{})
	check := func(st *State) error {
		if st.Meta.Version != Version || st.Meta.GenerationSeq != 0 || len(st.Live) != 0 {
			t.Fatalf("empty state = %+v", st.Meta)
		}
		a := st.Archive()
		if st.Live == nil || st.AliasCounters == nil || st.Orchestrators == nil || st.Leases == nil || st.Ops == nil ||
			a.Jobs == nil || a.Tombstones == nil || a.DeletionEpochs == nil || st.Waits == nil || st.Wake == nil || st.Injections == nil {
			t.Fatal("a map of the empty state is nil")
		}
		return nil
	}
	if err := s.View(check); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(s.Path()); !os.IsNotExist(err) {
		t.Fatalf("View created the document: %v", err)
	}
	if err := s.Update(check); err != nil {
		t.Fatal(err)
	}
	// A document that leaves maps out (or sets them to null) reads the
	// same way, so a transaction can write into any of them.
	other := openT(t, Options{})
	write(`{"meta":{"version":2},"jobs":null}`)(t, other.Path())
	if err := other.View(check); err != nil {
		t.Fatal(err)
	}
	if err := other.Update(func(st *State) error {
		check(st)
		st.Leases["a"] = &Lease{TaskID: "a", Kind: LeaseMessage, Token: "t", State: LeaseHeld}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var created time.Time
	s.View(func(st *State) error { created = st.Meta.CreatedAt; return nil })
	if created.IsZero() {
		t.Fatal("the first write did not stamp createdAt")
	}
	if fi, err := os.Lstat(s.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("document mode %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestUpdateWritesAndViewReads(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := openT(t, Options{Now: func() time.Time { return now }})
	if err := s.Update(func(st *State) error {
		g := st.NextGeneration()
		st.Live["ses_a"] = &Job{TaskID: "ses_a", State: JobRunning, Generation: g, Alias: "exp-1"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err := s.View(func(st *State) error {
		j := st.Live["ses_a"]
		if j == nil || j.Generation != 1 || j.Alias != "exp-1" || !st.Meta.CreatedAt.Equal(now) {
			t.Fatalf("read back %+v, meta %+v", j, st.Meta)
		}
		st.Live["ses_b"] = &Job{TaskID: "ses_b", State: JobRunning} // discarded
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(st *State) error {
		if st.Live["ses_b"] != nil {
			t.Fatal("a change made in View was kept")
		}
		return nil
	})
}

// snapshot is what a file looks like, to tell that a failed transaction
// left it alone.
type snapshot struct {
	fi   os.FileInfo
	data []byte
}

func snap(t *testing.T, path string) snapshot {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	if fi.Mode().IsRegular() {
		data, _ = os.ReadFile(path)
	}
	return snapshot{fi, data}
}

func (a snapshot) same(t *testing.T, path string) {
	t.Helper()
	b := snap(t, path)
	if !os.SameFile(a.fi, b.fi) || a.fi.Mode() != b.fi.Mode() || a.fi.Size() != b.fi.Size() || !a.fi.ModTime().Equal(b.fi.ModTime()) || !bytes.Equal(a.data, b.data) {
		t.Fatalf("%s changed: %v %d %v -> %v %d %v", path, a.fi.Mode(), a.fi.Size(), a.fi.ModTime(), b.fi.Mode(), b.fi.Size(), b.fi.ModTime())
	}
}

func TestAFailedTransactionWritesNothing(t *testing.T) {
	s := openT(t, Options{MaxBytes: 64 << 10})
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatal(err)
	}
	before := snap(t, s.Path())
	for _, c := range []struct {
		name string
		fn   func(*State) error
		kind Kind
		code string
	}{
		{"fn fails", func(st *State) error { st.NextGeneration(); return errStop }, "", ""},
		{"a null job", func(st *State) error { st.Live["x"] = nil; return nil }, Invalid, CodeBadUpdate},
		{"a generation never issued", func(st *State) error {
			st.Live["x"] = &Job{TaskID: "x", State: JobRunning, Generation: 99}
			return nil
		}, Invalid, CodeBadUpdate},
		{"another version", func(st *State) error { st.Meta.Version = Version + 1; return nil }, Invalid, CodeBadUpdate},
		{"over the size bound", func(st *State) error {
			st.Live["x"] = &Job{TaskID: "x", State: JobRunning, ResultSummary: strings.Repeat("y", 70<<10)}
			return nil
		}, Invalid, CodeTooLarge},
		{"a time JSON cannot write", func(st *State) error {
			st.Live["x"] = &Job{TaskID: "x", State: JobRunning, UpdatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
			return nil
		}, Invalid, CodeBadUpdate},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.Update(c.fn)
			if c.kind == "" {
				if err != errStop {
					t.Fatalf("err = %v, want fn's own error unchanged", err)
				}
			} else if !is(err, c.kind, c.code) {
				t.Fatalf("err = %v, want %s/%s", err, c.kind, c.code)
			}
			before.same(t, s.Path())
			if tmp := temps(t, s.Dir()); len(tmp) != 0 {
				t.Fatalf("temporaries left: %v", tmp)
			}
		})
	}
}

func TestAPanickingTransactionReleasesTheLock(t *testing.T) {
	s := openT(t, Options{LockTimeout: 200 * time.Millisecond})
	func() {
		defer func() { recover() }()
		s.Update(func(*State) error { panic("boom") })
	}()
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

func TestAnUpdateThatChangesNothingDoesNotWrite(t *testing.T) {
	var last Timing
	s := openT(t, Options{Observe: func(tm Timing) { last = tm }})
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatal(err)
	}
	if !last.Wrote || last.Bytes == 0 {
		t.Fatalf("first update: %+v", last)
	}
	before := snap(t, s.Path())
	if err := s.Update(func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if last.Wrote {
		t.Fatalf("a no-op update wrote: %+v", last)
	}
	before.same(t, s.Path())
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatal(err)
	}
	if !last.Wrote {
		t.Fatal("a real change was not written")
	}
}

func TestUpdateRemovesTemporariesOfKilledWriters(t *testing.T) {
	var last Timing
	s := openT(t, Options{Observe: func(tm Timing) { last = tm }})
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatal(err)
	}
	// What a writer killed between creating its temporary and renaming it
	// leaves behind: a half-written file beside the document.
	orphan := filepath.Join(s.Dir(), "."+DocumentName+".tmp-12345")
	os.WriteFile(orphan, []byte(`{"meta":{"vers`), 0o600)
	if err := s.View(func(st *State) error {
		if st.Meta.GenerationSeq != 1 {
			t.Fatalf("generationSeq %d with a temporary beside the document", st.Meta.GenerationSeq)
		}
		return nil
	}); err != nil {
		t.Fatalf("View with a temporary beside the document: %v", err)
	}
	if err := s.Update(func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(orphan); !os.IsNotExist(err) || last.Temps != 1 {
		t.Fatalf("the temporary is still there (%v), %d removed", err, last.Temps)
	}
}

// corruptions are documents that must fail closed. Each makes the file
// at path.
var corruptions = []struct {
	name string
	make func(t *testing.T, path string)
	kind Kind
	code string
}{
	{"not JSON", write(`{not json`), Corrupt, CodeCorrupt},
	{"empty", write(``), Corrupt, CodeCorrupt},
	{"truncated", func(t *testing.T, path string) {
		full, _ := os.ReadFile(filepath.Join("testdata", "state-v1.json"))
		write(string(full[:len(full)/2]))(t, path)
	}, Corrupt, CodeCorrupt},
	{"a JSON array", write(`[]`), Corrupt, CodeCorrupt},
	{"no version", write(`{"jobs":{}}`), Corrupt, CodeCorrupt},
	{"version as a string", write(`{"meta":{"version":"1"}}`), Corrupt, CodeCorrupt},
	{"an unknown field", write(`{"meta":{"version":1},"extra":{}}`), Corrupt, CodeCorrupt},
	{"data after the document", write(`{"meta":{"version":1}} {}`), Corrupt, CodeCorrupt},
	{"a null job", write(`{"meta":{"version":1},"jobs":{"a":null}}`), Corrupt, CodeCorrupt},
	{"a lease of an unknown kind", write(`{"meta":{"version":1},"leases":{"a":{"taskID":"a","kind":"x","token":"t","state":"held"}}}`), Corrupt, CodeCorrupt},
	{"a generation past the sequence", write(`{"meta":{"version":1,"generationSeq":1},"jobs":{"a":{"taskID":"a","state":"running","generation":2}}}`), Corrupt, CodeCorrupt},
	{"version 2 with an unknown field", write(`{"meta":{"version":2},"extra":{}}`), Corrupt, CodeCorrupt},
	{"version 2 with a generation past the sequence", write(`{"meta":{"version":2,"generationSeq":1},"jobs":{"a":{"taskID":"a","state":"running","generation":2}}}`), Corrupt, CodeCorrupt},
	{"version 2 with the tombstones of version 1", write(`{"meta":{"version":2},"tombstones":{}}`), Corrupt, CodeCorrupt},
	{"version 1 naming an archive", write(`{"meta":{"version":1,"archive":{"seq":1,"jobs":0}}}`), Corrupt, CodeCorrupt},
	{"version 5", write(`{"meta":{"version":5}}`), Unsupported, CodeVersion},
	{"version 5 with fields this build does not know", write(`{"meta":{"version":5,"shard":3},"queues":[]}`), Unsupported, CodeVersion},
	{"version 0", write(`{"meta":{"version":0}}`), Corrupt, CodeCorrupt},
	{"a symbolic link to a good document", func(t *testing.T, path string) {
		target := filepath.Join(t.TempDir(), "elsewhere.json")
		os.WriteFile(target, []byte(`{"meta":{"version":1}}`), 0o600)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}, Corrupt, CodeNotRegular},
	{"a dangling symbolic link", func(t *testing.T, path string) {
		if err := os.Symlink(filepath.Join(t.TempDir(), "nothing"), path); err != nil {
			t.Fatal(err)
		}
	}, Corrupt, CodeNotRegular},
	{"a named pipe", func(t *testing.T, path string) {
		mkfifo(t, path)
	}, Corrupt, CodeNotRegular},
	{"a directory", func(t *testing.T, path string) { os.Mkdir(path, 0o700) }, Corrupt, CodeNotRegular},
	{"over the size bound", func(t *testing.T, path string) {
		// Sparse: nothing is written, and nothing may be read.
		write(`{"meta":{"version":1}}`)(t, path)
		if err := os.Truncate(path, DefaultMaxBytes+1); err != nil {
			t.Fatal(err)
		}
	}, Corrupt, CodeTooLarge},
}

func write(content string) func(*testing.T, string) {
	return func(t *testing.T, path string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func TestADocumentThatCannotBeUsedFailsClosedAndStaysUntouched(t *testing.T) {
	for _, c := range corruptions {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, Options{LockTimeout: time.Second})
			c.make(t, s.Path())
			before := snap(t, s.Path())
			var target snapshot
			if dst, err := os.Readlink(s.Path()); err == nil {
				if _, err := os.Stat(dst); err == nil {
					target = snap(t, dst)
					defer target.same(t, dst)
				}
			}
			called := false
			fn := func(*State) error { called = true; return nil }
			done := make(chan [2]error, 1)
			go func() { done <- [2]error{s.View(fn), s.Update(fn)} }()
			var errs [2]error
			select {
			case errs = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("View or Update hung")
			}
			for i, op := range []string{"View", "Update"} {
				if !is(errs[i], c.kind, c.code) {
					t.Errorf("%s: err = %v, want %s/%s", op, errs[i], c.kind, c.code)
				}
			}
			if called {
				t.Error("fn saw the document")
			}
			before.same(t, s.Path())
			if e, _ := AsError(errs[1]); e != nil && !strings.Contains(e.Message, "left as it is") {
				t.Errorf("the message does not say the file was kept: %q", e.Message)
			}
		})
	}
}

func TestALockFileThatIsALinkIsRefused(t *testing.T) {
	s := openT(t, Options{LockTimeout: 100 * time.Millisecond})
	target := filepath.Join(t.TempDir(), "target")
	os.Symlink(target, filepath.Join(s.Dir(), LockName))
	if err := s.Update(func(*State) error { return nil }); !is(err, Unsafe, CodeLockUnsafe) {
		t.Fatalf("err = %v, want %s/%s", err, Unsafe, CodeLockUnsafe)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatal("a file was created at the link's target")
	}
}

func TestUpdateGivesUpWithBusyWhileAnotherProcessHoldsTheLock(t *testing.T) {
	s := openT(t, Options{LockTimeout: 150 * time.Millisecond})
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatal(err)
	}
	holder, stdin, stderr := startHelper(t, "hold", s.Dir(), "locked")
	start := time.Now()
	called := false
	err := s.Update(func(*State) error { called = true; return nil })
	waited := time.Since(start)
	if !is(err, Busy, CodeBusy) || called {
		t.Fatalf("err = %v (fn called: %v), want %s/%s", err, called, Busy, CodeBusy)
	}
	if waited < 150*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("gave up after %v, want about the 150ms timeout", waited)
	}
	// Readers never wait for the lock.
	if err := s.View(func(st *State) error {
		if st.Meta.GenerationSeq != 1 {
			t.Fatalf("View under the lock read generationSeq %d", st.Meta.GenerationSeq)
		}
		return nil
	}); err != nil {
		t.Fatalf("View while the lock is held: %v", err)
	}
	stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("helper: %v: %s", err, stderr.String())
	}
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatalf("after the holder let go: %v", err)
	}
}

func TestUpdateWaitsForTheLockUpToTheDefaultTimeout(t *testing.T) {
	s := openT(t, Options{})
	holder, stdin, _ := startHelper(t, "hold", s.Dir(), "locked")
	const held = 300 * time.Millisecond
	time.AfterFunc(held, func() { stdin.Close() })
	start := time.Now()
	if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
		t.Fatalf("an Update with the default %v wait, the lock held %v: %v", DefaultLockTimeout, held, err)
	}
	if waited := time.Since(start); waited < held {
		t.Fatalf("got the lock after %v, while it was held for %v", waited, held)
	}
	holder.Wait()
}

// is reports whether err is a store *Error of kind k and code c.
func is(err error, k Kind, c string) bool {
	gk, gc := kindCode(err)
	return gk == k && gc == c
}
