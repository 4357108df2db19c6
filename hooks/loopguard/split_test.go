package loopguard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Each call of these tests goes through a Store of its own, as each hook
// process has one.
func fresh(root string) *Guard { return &Guard{Store: NewStore(root, StoreOptions{})} }

func TestPhases(t *testing.T) {
	cases := []struct {
		tool          string
		before, after bool
	}{
		{"read", true, true}, {"Read", true, true}, {"GREP", true, true}, {"glob", true, true},
		{"bash", false, true}, {"edit", false, true}, {"apply_patch", false, true}, {"mcp_search", false, true},
		{"task", false, false}, {"Task", false, false}, {"task_status", false, false}, {"task_result", false, false},
		{"task_cancel", false, false}, {"task_message", false, false}, {"task_revive", false, false},
		{"wait_for_user", false, false}, {"WAIT_FOR_BACKGROUND_TASKS", false, false},
	}
	for _, c := range cases {
		if b, a := Phases(c.tool); b != c.before || a != c.after {
			t.Errorf("Phases(%q) = %v, %v; want %v, %v", c.tool, b, a, c.before, c.after)
		}
	}
	named := NamedTools()
	for _, name := range named {
		if name != strings.ToLower(name) {
			t.Errorf("named tool %q is not lower case", name)
		}
		if b, a := Phases(name); !b && a {
			t.Errorf("%q is named but has the phases of any other tool", name)
		}
	}
	for _, want := range []string{"read", "grep", "glob", "task", "wait_for_background_tasks"} {
		if !slices.Contains(named, want) {
			t.Errorf("NamedTools lacks %q", want)
		}
	}
}

// A before for a tool that cannot be refused reads nothing: a record that
// would refuse a read changes nothing for it, and neither does an unsafe
// state root.
func TestBeforeLooksOnlyAtRefusableTools(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	p := s.Path("s")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, refusingRecord(t, "s"), 0o600)
	for _, tool := range []string{"bash", "apply_patch", "task", "task_status", "webfetch"} {
		if refusal, err := (&Guard{Store: s}).Before(tool, "s", readArgs); err != nil || refusal != "" {
			t.Errorf("%s: refusal %q, err %v", tool, refusal, err)
		}
	}
	unsafeRoot := filepath.Join(t.TempDir(), "state")
	os.Mkdir(unsafeRoot, 0o777)
	os.Chmod(unsafeRoot, 0o777)
	if _, err := fresh(unsafeRoot).Before("bash", "s", readArgs); err != nil {
		t.Errorf("bash looked at the state root: %v", err)
	}
}

// Before creates and writes nothing: no root, no directory, no lock and no
// record for a new session, and a session's record stays byte for byte as
// the last after left it.
func TestBeforeWritesNothing(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	for i := 0; i < 3; i++ {
		if refusal, err := fresh(root).Before("read", "s", readArgs); err != nil || refusal != "" {
			t.Fatalf("before on no state: %q %v", refusal, err)
		}
	}
	if _, err := os.Lstat(root); !os.IsNotExist(err) {
		t.Fatalf("before created the state root: %v", err)
	}
	if _, err := fresh(root).After("read", "s", readArgs, "x"); err != nil {
		t.Fatal(err)
	}
	// A session of its own shard, with the root and loop/v1 in place.
	other := "t"
	for filepath.Dir(NewStore(root, StoreOptions{}).Path(other)) == filepath.Dir(NewStore(root, StoreOptions{}).Path("s")) {
		other += "t"
	}
	if _, err := fresh(root).Before("read", other, readArgs); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Dir(NewStore(root, StoreOptions{}).Path(other))); !os.IsNotExist(err) {
		t.Fatalf("before created a shard directory: %v", err)
	}
	s := NewStore(root, StoreOptions{})
	was, _ := os.ReadFile(s.Path("s"))
	fi, _ := os.Stat(s.Path("s"))
	listing := func() []string {
		var names []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			names = append(names, p)
			return nil
		})
		return names
	}
	before := listing()
	time.Sleep(10 * time.Millisecond) // a rewrite would show in the mtime
	for i := 0; i < 5; i++ {
		fresh(root).Before("read", "s", readArgs)
		fresh(root).Before("grep", "s", map[string]any{"pattern": "x"})
	}
	now, _ := os.ReadFile(s.Path("s"))
	fi2, _ := os.Stat(s.Path("s"))
	if string(now) != string(was) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("before rewrote the record")
	}
	if after := listing(); !slices.Equal(before, after) {
		t.Fatalf("before changed the state directory:\n%v\n%v", before, after)
	}
}

// The refusal is decided in before from the count the afters wrote, each
// phase in a process (a Store) of its own.
func TestBeforeSeesTheCountAfterWrote(t *testing.T) {
	root := t.TempDir()
	var got []string
	for i := 1; i <= 7; i++ {
		refusal, err := fresh(root).Before("read", "s", readArgs)
		if err != nil {
			t.Fatal(err)
		}
		if refusal != "" {
			got = append(got, "R")
			continue
		}
		notice, err := fresh(root).After("read", "s", readArgs, "same")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, map[bool]string{true: "N", false: "."}[notice != ""])
	}
	if s := strings.Join(got, ""); s != "..NNNRR" {
		t.Fatalf("got %s, want ..NNNRR", s)
	}
}

// Identical calls in parallel: befores that run while afters are being
// written each see a whole record (never an error, never a torn file), no
// after's count is lost, and a run grows only by afters, one per result.
func TestParallelBeforesAndAftersLoseNoCount(t *testing.T) {
	root := t.TempDir()
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	refusedEarly := make(chan int, n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if _, err := fresh(root).After("read", "s", readArgs, "same"); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 4; j++ {
				refusal, err := fresh(root).Before("read", "s", readArgs)
				if err != nil {
					errs <- err
				}
				if refusal != "" {
					// Only a record with at least refuseAt results refuses.
					if st := NewStore(root, StoreOptions{}).Load("s"); st.Last.Runs < refuseAt {
						refusedEarly <- st.Last.Runs
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	close(refusedEarly)
	for err := range errs {
		t.Error(err)
	}
	for runs := range refusedEarly {
		t.Errorf("refused at %d runs", runs)
	}
	if st := NewStore(root, StoreOptions{}).Load("s"); st.Last.Runs != n {
		t.Fatalf("runs = %d after %d parallel afters", st.Last.Runs, n)
	}
}

// Befores never count: any number of them, in parallel or not, leave the
// run where the afters put it, and parallel calls whose results differ
// make no run at all.
func TestParallelBeforesDoNotInflateARun(t *testing.T) {
	root := t.TempDir()
	fresh(root).After("read", "s", readArgs, "same")
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); fresh(root).Before("read", "s", readArgs) }()
	}
	wg.Wait()
	if st := NewStore(root, StoreOptions{}).Load("s"); st.Last.Runs != 1 {
		t.Fatalf("runs = %d after one result and 16 befores", st.Last.Runs)
	}
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); fresh(root).After("read", "s", readArgs, fmt.Sprint("out ", i)) }()
	}
	wg.Wait()
	if st := NewStore(root, StoreOptions{}).Load("s"); st.Last.Runs > 2 {
		t.Fatalf("runs = %d after 8 different results", st.Last.Runs)
	}
	if refusal, _ := fresh(root).Before("read", "s", readArgs); refusal != "" {
		t.Fatal("refused after different results")
	}
}

// An after without args cannot extend a run, however many there are.
func TestAfterWithoutArgsStartsANewRun(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 7; i++ {
		if notice, err := fresh(root).After("read", "s", nil, "same"); err != nil || notice != "" {
			t.Fatalf("after %d: notice %q, err %v", i, notice, err)
		}
	}
	if st := NewStore(root, StoreOptions{}).Load("s"); st.Last.Runs != 1 {
		t.Fatalf("runs = %d", st.Last.Runs)
	}
}

// A record an older slim wrote, with its map of pending calls, still
// counts: the run goes on, and the next write drops the map.
func TestRecordWithPendingCallsStillCounts(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	p := s.Path("s")
	os.MkdirAll(filepath.Dir(p), 0o700)
	old := fmt.Sprintf(`{"version":1,"session":"s","updatedAt":"2026-01-01T00:00:00Z","last":{"args":%q,"runs":4,"output":%q},"pending":{"c9":{"args":%q,"createdAt":"2026-01-01T00:00:00Z"}}}`,
		fingerprint("read", readArgs), fingerprint("read", "same"), fingerprint("read", readArgs))
	os.WriteFile(p, []byte(old), 0o600)
	if refusal, _ := (&Guard{Store: s}).Before("read", "s", readArgs); refusal != "" {
		t.Fatal("refused at 4 runs")
	}
	if notice, err := (&Guard{Store: s}).After("read", "s", readArgs, "same"); err != nil || notice == "" {
		t.Fatalf("the 5th identical result: notice %q, err %v", notice, err)
	}
	if refusal, _ := (&Guard{Store: s}).Before("read", "s", readArgs); refusal == "" {
		t.Fatal("the 6th identical read was not refused")
	}
	if data, _ := os.ReadFile(p); strings.Contains(string(data), "pending") {
		t.Fatalf("the rewritten record kept the pending map: %s", data)
	}
}

// A shard directory linked elsewhere is never read through: a refusing
// record behind the link refuses nothing.
func TestBeforeDoesNotReadThroughALinkedShard(t *testing.T) {
	s := NewStore(t.TempDir(), StoreOptions{})
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, filepath.Base(s.Path("s"))), refusingRecord(t, "s"), 0o600)
	os.MkdirAll(filepath.Dir(filepath.Dir(s.Path("s"))), 0o700)
	if err := os.Symlink(outside, filepath.Dir(s.Path("s"))); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	refusal, err := (&Guard{Store: s}).Before("read", "s", readArgs)
	if refusal != "" || err == nil {
		t.Fatalf("refusal %q, err %v; want no refusal and the unsafe directory reported", refusal, err)
	}
}
