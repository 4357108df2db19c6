package rescue_test

// The kill test: the real binary applies a patch that touches several
// files, two of them about 5 MB, and is killed with SIGKILL after a random
// delay. Afterwards every file must hold either its old bytes or its new
// bytes (absent counts as the old state of an added file and the new state
// of a deleted or moved-away one), never a mix. Temporary sibling files may
// remain; they are counted and logged.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/internal/drift"
	"github.com/slimgate/slim/internal/testbin"
)

// TestMain removes the binary testbin.Shared built, once every test has
// run.
func TestMain(m *testing.M) { os.Exit(testbin.M(m).Run()) }

// bigLines returns n distinct lines that look like log or source text.
func bigLines(r *rand.Rand, n int, eol string) []drift.Line {
	words := []string{"alpha", "beta", "gamma", "delta", "\"quoted\"", "return", "if err != nil {", "}", "x := y", "// note"}
	out := make([]drift.Line, n)
	for i := range out {
		out[i] = drift.Line{Text: fmt.Sprintf("%08d %s %s %s", i, words[r.IntN(len(words))], words[r.IntN(len(words))], words[r.IntN(len(words))]), EOL: eol}
	}
	return out
}

// killFixture is the file set of the kill test: paths -> old bytes and new
// bytes (nil = absent), and the patch between them.
type killFixture struct {
	old, new map[string][]byte
	patch    string
}

func newKillFixture(r *rand.Rand, bigLinesPerFile int) killFixture {
	f := killFixture{old: map[string][]byte{}, new: map[string][]byte{}}
	var p strings.Builder
	p.WriteString("*** Begin Patch\n")
	update := func(path string, lines []drift.Line, chunks int) {
		edits := drift.SpreadEdits(r, lines, chunks, 3)
		p.WriteString(drift.UpdateHunk(path, lines, edits, 3))
		f.old[path] = drift.Join(lines)
		f.new[path] = drift.ApplyAll(lines, edits)
	}
	update("big/one.txt", bigLines(r, bigLinesPerFile, "\n"), 20)
	update("big/two.txt", bigLines(r, bigLinesPerFile, "\n"), 20)
	update("src/small.go", bigLines(r, 200, "\n"), 3)
	update("src/crlf.txt", bigLines(r, 300, "\r\n"), 2)

	f.old["old/gone.txt"] = []byte("to be deleted\n")
	f.new["old/gone.txt"] = nil
	p.WriteString("*** Delete File: old/gone.txt\n")

	f.old["added/deep/new.txt"] = nil
	f.new["added/deep/new.txt"] = []byte("brand\nnew\n")
	p.WriteString("*** Add File: added/deep/new.txt\n+brand\n+new\n")

	from := bigLines(r, 50, "\n")
	edits := []drift.Edit{{Start: 20, Del: 1, Add: []string{"moved and edited"}}}
	f.old["src/from.txt"] = drift.Join(from)
	f.new["src/from.txt"] = nil
	f.old["moved/to.txt"] = nil
	f.new["moved/to.txt"] = drift.ApplyAll(from, edits)
	hunk := drift.UpdateHunk("src/from.txt", from, edits, 3)
	hunk = strings.Replace(hunk, "\n", "\n*** Move to: moved/to.txt\n", 1)
	p.WriteString(hunk)

	p.WriteString("*** End Patch\n")
	f.patch = p.String()
	return f
}

// reset makes dir hold exactly the old state.
func (f killFixture) reset(t testing.TB, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	present := map[string][]byte{}
	for p, b := range f.old {
		if b != nil {
			present[p] = b
		}
	}
	writeTree(t, dir, present)
}

// check compares dir with the old and new states, file by file. It returns
// how many files are in their new state, the paths that hold neither state,
// and the leftover paths that belong to neither state (temporary files,
// created directories).
func (f killFixture) check(t testing.TB, dir string) (newCount int, torn, leftovers []string) {
	t.Helper()
	snap := snapshot(t, dir)
	known := map[string]bool{}
	for p := range f.old {
		known[p] = true
		for d := filepath.ToSlash(filepath.Dir(p)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			known[d+"/"] = true
		}
		got, ok := snap[p]
		oldB, newB := f.old[p], f.new[p]
		isOld := (oldB == nil && !ok) || (oldB != nil && ok && got == string(oldB))
		isNew := (newB == nil && !ok) || (newB != nil && ok && got == string(newB))
		switch {
		case isNew && !isOld:
			newCount++
		case !isOld && !isNew:
			what := "absent"
			if ok {
				what = fmt.Sprintf("%d bytes", len(got))
			}
			torn = append(torn, fmt.Sprintf("%s (%s)", p, what))
		}
	}
	// Directories that hold no file are leftovers too (created for an
	// added or moved file, not yet removed when the process died).
	holds := map[string]bool{}
	for p := range snap {
		if strings.HasSuffix(p, "/") {
			continue
		}
		for d := filepath.ToSlash(filepath.Dir(p)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			holds[d+"/"] = true
		}
	}
	oldDirs := map[string]bool{}
	for p, b := range f.old {
		for d := filepath.ToSlash(filepath.Dir(p)); b != nil && d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			oldDirs[d+"/"] = true
		}
	}
	for p := range snap {
		if !known[p] || (strings.HasSuffix(p, "/") && !holds[p] && !oldDirs[p]) {
			leftovers = append(leftovers, p)
		}
	}
	sort.Strings(leftovers)
	return newCount, torn, leftovers
}

func TestApplyKill(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL test needs a POSIX system")
	}
	bin := testbin.Shared(t)
	r := rand.New(rand.NewPCG(*propSeed, 0x6b11))
	linesPerBig := 130_000 // about 5 MB each
	iterations := 50
	if testing.Short() {
		linesPerBig, iterations = 30_000, 8
	}
	fx := newKillFixture(r, linesPerBig)
	base := t.TempDir()
	patchFile := filepath.Join(base, "change.patch")
	if err := os.WriteFile(patchFile, []byte(fx.patch), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "root")
	run := func() *exec.Cmd {
		cmd := exec.Command(bin, "rescue", "--root", dir, "--apply", patchFile)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SLIM_STATE_DIR="+filepath.Join(base, "state"))
		return cmd
	}

	// Three runs to completion: every file in its new state, nothing left
	// over. The fastest run sets the time scale of the kills: on a busy
	// machine the slower runs overshoot, and kills past the end of a run
	// test nothing.
	var runs []time.Duration
	for i := 0; i < 3; i++ {
		fx.reset(t, dir)
		start := time.Now()
		if out, err := run().CombinedOutput(); err != nil {
			t.Fatalf("apply without kill: %v\n%s", err, out)
		}
		runs = append(runs, time.Since(start))
		if n, torn, left := fx.check(t, dir); n != len(fx.new) || len(torn) > 0 || len(left) > 0 {
			t.Fatalf("apply without kill: %d of %d files new, torn %v, leftovers %v", n, len(fx.new), torn, left)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
	full := runs[0]
	t.Logf("full apply takes %v (fastest of %v); killing at random points of [0, %v]", full, runs, full*11/10)

	var allOld, allNew, mixed, finished, withLeftovers int
	leftoverNames := map[string]int{}
	for i := 0; i < iterations; i++ {
		fx.reset(t, dir)
		delay := time.Duration(r.Int64N(int64(full * 11 / 10)))
		if i%2 == 1 { // half the kills in the last 40%, where the renames happen
			delay = full*6/10 + time.Duration(r.Int64N(int64(full/2)))
		}
		cmd := run()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay)
		killErr := cmd.Process.Signal(syscall.SIGKILL)
		waitErr := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case waitErr == nil:
			finished++
		case errors.As(waitErr, &ee) && !ee.Exited():
			// killed
		default:
			t.Errorf("iteration %d: %v (kill: %v)\n%s", i, waitErr, killErr, stderr.String())
		}
		n, torn, left := fx.check(t, dir)
		if len(torn) > 0 {
			t.Errorf("iteration %d (killed after %v): files in neither state: %v", i, delay, torn)
		}
		switch n {
		case 0:
			allOld++
		case len(fx.new):
			allNew++
		default:
			mixed++
		}
		if len(left) > 0 {
			withLeftovers++
			for _, p := range left {
				leftoverNames[leftoverPattern(p)]++
			}
		}
	}
	t.Logf("%d kills: %d all old, %d all new (%d ran to completion), %d mixed (some files new), %d left temporary paths",
		iterations, allOld, allNew, finished, mixed, withLeftovers)
	for p, n := range leftoverNames {
		t.Logf("leftover %s: %d times", p, n)
	}
}

// leftoverPattern blurs the random part of a temporary name so that counts
// group.
func leftoverPattern(p string) string {
	return tempSuffix.ReplaceAllString(p, "-*.tmp")
}

var tempSuffix = regexp.MustCompile(`-[0-9a-zA-Z]+\.tmp$`)

// TestKillFixtureCheck checks the kill test's own judge: the old state, the
// new state and a per-file mix pass; a torn file and a stray file are seen.
func TestKillFixtureCheck(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	fx := newKillFixture(r, 500)
	dir := filepath.Join(t.TempDir(), "root")
	fx.reset(t, dir)
	if n, torn, left := fx.check(t, dir); n != 0 || torn != nil || left != nil {
		t.Fatalf("old state: n=%d torn=%v left=%v", n, torn, left)
	}
	// Move every file to its new state except big/two.txt: a mix.
	for p, b := range fx.new {
		full := filepath.Join(dir, filepath.FromSlash(p))
		switch {
		case p == "big/two.txt":
		case b == nil:
			os.Remove(full)
		default:
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.WriteFile(full, b, 0o644)
		}
	}
	n, torn, left := fx.check(t, dir)
	if n != len(fx.new)-1 || torn != nil || left != nil {
		t.Fatalf("mixed state: n=%d of %d, torn=%v left=%v", n, len(fx.new), torn, left)
	}
	// A half-written file and a temporary sibling.
	two := filepath.Join(dir, "big", "two.txt")
	os.WriteFile(two, fx.new["big/two.txt"][:1000], 0o644)
	os.WriteFile(filepath.Join(dir, "big", ".two.txt.tmp-123"), []byte("x"), 0o644)
	_, torn, left = fx.check(t, dir)
	if len(torn) != 1 || !strings.HasPrefix(torn[0], "big/two.txt") || len(left) != 1 {
		t.Fatalf("torn=%v left=%v", torn, left)
	}
	// An empty directory created for an added file is a leftover.
	fx.reset(t, dir)
	os.MkdirAll(filepath.Join(dir, "added", "deep"), 0o755)
	if _, torn, left := fx.check(t, dir); torn != nil || len(left) != 2 {
		t.Fatalf("empty created dirs: torn=%v left=%v", torn, left)
	}
	// The patch covers every file of the fixture.
	for p := range fx.old {
		if !strings.Contains(fx.patch, p) {
			t.Errorf("patch does not mention %s", p)
		}
	}
}
