package rescue

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
	"github.com/slimgate/slim/worktree"
)

func TestApplyModes(t *testing.T) {
	e := newEnv(t, map[string]string{"exec.sh": "echo a\n", "tool.sh": "x\n"})
	os.Chmod(filepath.Join(e.dir, "exec.sh"), 0o750)
	os.Chmod(filepath.Join(e.dir, "tool.sh"), 0o755)
	_, err := e.process(wrap("*** Update File: exec.sh\n@@\n-echo a\n+echo b\n*** Update File: tool.sh\n*** Move to: bin/tool.sh\n@@\n-x\n+y\n*** Add File: new.txt\n+n\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	mode := func(name string) os.FileMode {
		fi, err := os.Stat(filepath.Join(e.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	if m := mode("exec.sh"); m != 0o750 {
		t.Errorf("exec.sh mode %o, want 750", m)
	}
	if m := mode("bin/tool.sh"); m != 0o755 {
		t.Errorf("moved mode %o, want 755", m)
	}
	if m, want := mode("new.txt"), os.FileMode(0o666&^currentUmask()); m != want {
		t.Errorf("new file mode %o, want %o", m, want)
	}
	// No temporary files remain.
	ents, _ := os.ReadDir(e.dir)
	for _, ent := range ents {
		if ent.Name()[0] == '.' {
			t.Errorf("left behind %s", ent.Name())
		}
	}
}

// A new file below a path that is a file is refused before anything is
// written: the host would fail after writing the files before it.
func TestCreateBelowFileRefused(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\n", "blocker": "I am a file\n"})
	for _, apply := range []bool{false, true} {
		_, err := e.process(wrap("*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: blocker/child.txt\n+x\n"), apply)
		if kindOf(err) != Verification || !strings.Contains(err.Error(), "is a file, not a directory") {
			t.Fatalf("apply=%v: %v", apply, err)
		}
	}
	if got, _ := e.read("a.txt"); got != "a\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// A write that fails part way (here: a file appears where slim must create
// a directory, after the first files were written) restores every file and
// removes the directories slim created.
func TestApplyRollback(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\n", "gone.txt": "g\n"})
	w, r := resolved(t, e.dir, "*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: newdir/sub/f.txt\n+f\n*** Delete File: gone.txt\n*** Add File: late/child.txt\n+x\n")
	err := w.apply(context.Background(), r, func(i int) {
		if i == 2 { // a.txt and newdir/sub/f.txt are written
			os.WriteFile(filepath.Join(e.dir, "late"), []byte("someone's file\n"), 0o644)
		}
	})
	if kindOf(err) != Verification || !strings.Contains(err.Error(), "is a file, not a directory") {
		t.Fatalf("got %v", err)
	}
	if got, _ := e.read("a.txt"); got != "a\n" {
		t.Errorf("a.txt = %q after rollback", got)
	}
	if got, ok := e.read("gone.txt"); !ok || got != "g\n" {
		t.Errorf("gone.txt = %q %v after rollback", got, ok)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "newdir")); !os.IsNotExist(err) {
		t.Errorf("created directory left behind: %v", err)
	}
	ents, _ := os.ReadDir(e.dir)
	if len(ents) != 3 {
		t.Errorf("directory holds %d entries, want 3", len(ents))
	}
}

// Apply compares against the bytes read: a file changed between the read and
// the write is not overwritten.
func TestApplyCompareAndSwap(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	w, r := resolved(t, e.dir, "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n")
	os.WriteFile(filepath.Join(e.dir, "b.txt"), []byte("someone else\n"), 0o644)
	err := w.apply(context.Background(), r, nil)
	if kindOf(err) != Verification {
		t.Fatalf("got %v, want a verification error", err)
	}
	if got, _ := e.read("a.txt"); got != "a\n" {
		t.Errorf("a.txt written although b.txt changed: %q", got)
	}
	if got, _ := e.read("b.txt"); got != "someone else\n" {
		t.Errorf("b.txt overwritten: %q", got)
	}
}

// A symlinked directory inside the root is written through, never replaced.
func TestApplySymlinkAlias(t *testing.T) {
	e := newEnv(t, map[string]string{"real/x.txt": "x\n"})
	if err := os.Symlink("real", filepath.Join(e.dir, "alias")); err != nil {
		t.Skip(err)
	}
	res, err := e.process(wrap("*** Update File: alias/x.txt\n@@\n-x\n+y\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != DecisionUnchanged {
		t.Errorf("decision %s", res.Decision)
	}
	if _, err := e.process(wrap("*** Update File: alias/x.txt\n@@\n-x\n+y\n"), true); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.read("real/x.txt"); got != "y\n" {
		t.Errorf("real/x.txt = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(e.dir, "alias")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("alias is no longer a symlink")
	}
	// Two spellings of one file merge into one hunk under the first.
	res, err = e.process(wrap("*** Update File: real/x.txt\n@@\n-y\n+z\n*** Update File: alias/x.txt\n@@\n-z\n+w\n"), false)
	if err != nil {
		t.Fatal(err)
	}
	if want := wrap("*** Update File: real/x.txt\n@@\n-y\n+w\n*** End of File\n"); *res.PatchText != want {
		t.Errorf("merged patch:\n%s\nwant:\n%s", *res.PatchText, want)
	}
}

// A session rooted in a subdirectory of its worktree can write elsewhere in
// the worktree; absolute paths come out relative to the session.
func TestWorktreeWidensRoot(t *testing.T) {
	e := newEnv(t, map[string]string{"sub/keep.txt": "k\n"})
	sub := filepath.Join(e.dir, "sub")
	res, err := Process([]byte(wrap("*** Add File: "+filepath.Join(e.dir, "shared.txt")+"\n+s\n")), Options{Directory: sub, Worktree: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := wrap("*** Add File: ../shared.txt\n+s\n"); *res.PatchText != want {
		t.Errorf("got\n%s", *res.PatchText)
	}
	if _, err := Process([]byte(wrap("*** Add File: ../shared.txt\n+s\n")), Options{Directory: sub, NoWorktree: true}); kindOf(err) != Blocked {
		t.Errorf("without a worktree: %v, want blocked", err)
	}
}

// Passthrough hands the original on for targets outside by spelling only
// (so that the host asks the user itself), and never when slim writes.
func TestOutsidePassthrough(t *testing.T) {
	e := newEnv(t, map[string]string{"in.txt": "stale\n"})
	patch := wrap("*** Add File: ../out.txt\n+x\n*** Update File: in.txt\n@@\n-stale\n+fresh\n")
	res, err := Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true, Outside: OutsidePassthrough})
	if err != nil {
		t.Fatal(err)
	}
	if res.Decision != DecisionPassthrough || *res.PatchText != patch {
		t.Errorf("got %s", res.Decision)
	}
	// Process reads no environment: an empty Outside blocks whatever
	// SLIM_OUTSIDE says (the CLI reads the variable and passes it on).
	t.Setenv("SLIM_OUTSIDE", "passthrough")
	if _, err := Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true}); kindOf(err) != Blocked {
		t.Errorf("empty Outside with SLIM_OUTSIDE=passthrough: %v, want blocked", err)
	}
	if _, err := Process([]byte(patch), Options{Directory: e.dir, NoWorktree: true, Outside: OutsideBlock}); kindOf(err) != Blocked {
		t.Errorf("Outside block: %v, want blocked", err)
	}
	for _, o := range []Options{{Apply: true}, {DryRunDiff: true}} {
		o.Directory, o.Worktree, o.Outside = e.dir, "/", OutsidePassthrough
		if _, err := Process([]byte(patch), o); kindOf(err) != Blocked {
			t.Errorf("%+v: %v, want blocked", o, err)
		}
	}
	if got, _ := e.read("in.txt"); got != "stale\n" {
		t.Errorf("in.txt changed")
	}
}

func TestDryRunDiff(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "d.txt": "bye\n"})
	res, err := Process([]byte(wrap("*** Update File: a.txt\n@@\n-2\n+two\n*** Delete File: d.txt\n*** Add File: n.txt\n+new\n")), Options{Directory: e.dir, NoWorktree: true, DryRunDiff: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n" +
		"--- a/d.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" +
		"--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"
	if res.Diff != want {
		t.Errorf("diff:\n%s\nwant:\n%s", res.Diff, want)
	}
	if got, _ := e.read("a.txt"); got != "1\n2\n3\n4\n5\n6\n7\n8\n9\n" {
		t.Errorf("dry run wrote")
	}
}

// Above 8 MiB only the exact rung runs, with no rescue step.
func TestSizeCapExactOnly(t *testing.T) {
	big := strings.Repeat("filler line\n", (maxRescueSize/12)+10) + "target  \n"
	e := newEnv(t, map[string]string{"big.txt": big})
	if _, err := e.process(wrap("*** Update File: big.txt\n@@\n-target\n+done\n"), false); kindOf(err) != Verification {
		t.Fatalf("tolerant match above the cap: %v", err)
	}
	if _, err := e.process(wrap("*** Update File: big.txt\n@@\n-target  \n+done\n"), true); err != nil {
		t.Fatalf("exact match above the cap: %v", err)
	}
	if got, _ := e.read("big.txt"); !strings.HasSuffix(got, "filler line\ndone\n") {
		t.Errorf("not applied")
	}
}

// A directory slim cannot read is an internal error, never a write.
func TestUnreadableIsInternal(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("permissions do not apply to root")
	}
	e := newEnv(t, map[string]string{"locked/f.txt": "x\n"})
	os.Chmod(filepath.Join(e.dir, "locked"), 0)
	defer os.Chmod(filepath.Join(e.dir, "locked"), 0o755)
	_, err := e.process(wrap("*** Update File: locked/f.txt\n@@\n-x\n+y\n"), true)
	if k := kindOf(err); k != Internal && k != Blocked {
		t.Errorf("got %v", err)
	}
}

// Two hard links are one file: updates through both merge into one hunk
// under the first spelling, so the file has one final text.
func TestHardLinksAreOneFile(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "1\n2\n3\n"})
	if err := os.Link(filepath.Join(e.dir, "a.txt"), filepath.Join(e.dir, "b.txt")); err != nil {
		t.Skip(err)
	}
	text := wrap("*** Update File: a.txt\n@@\n-1\n+one\n*** Update File: b.txt\n@@\n-3\n+three\n")
	res, err := e.process(text, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(*res.PatchText, "b.txt") || !hasRepair(res.Repairs, patch.RepairSamePathMerged) {
		t.Errorf("not merged:\n%s", *res.PatchText)
	}
	if _, err := e.process(text, true); err != nil {
		t.Fatal(err)
	}
	// Apply replaces the name it patched with a new file (an atomic rename);
	// the other link keeps the old bytes.
	if got, _ := e.read("a.txt"); got != "one\n2\nthree\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got, _ := e.read("b.txt"); got != "1\n2\n3\n" {
		t.Errorf("b.txt = %q", got)
	}
}

// A name close to the length limit is still written (the temporary name
// stays short enough).
func TestApplyLongName(t *testing.T) {
	e := newEnv(t, nil)
	name := strings.Repeat("n", 250)
	if _, err := e.process(wrap("*** Add File: "+name+"\n+x\n"), true); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.read(name); got != "x\n" {
		t.Errorf("got %q", got)
	}
}

// Deleting or moving a path that is a symbolic link is refused: the host
// would remove the link, slim's model the file behind it.
func TestLinkDeleteMoveRefused(t *testing.T) {
	e := newEnv(t, map[string]string{"real.txt": "r\n"})
	if err := os.Symlink("real.txt", filepath.Join(e.dir, "link.txt")); err != nil {
		t.Skip(err)
	}
	for _, patch := range []string{"*** Delete File: link.txt\n", "*** Update File: link.txt\n*** Move to: other.txt\n@@\n-r\n+s\n"} {
		for _, apply := range []bool{false, true} {
			_, err := e.process(wrap(patch), apply)
			if kindOf(err) != Verification || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%q apply=%v: %v", patch, apply, err)
			}
		}
	}
	// Updating through the link writes the file behind it, as the host does.
	if _, err := e.process(wrap("*** Update File: link.txt\n@@\n-r\n+s\n"), true); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.read("real.txt"); got != "s\n" {
		t.Errorf("real.txt = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(e.dir, "link.txt")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link replaced")
	}
}

// resolved parses body and resolves it against the files in dir, so a test
// can change the tree between the resolve and the apply.
func resolved(t *testing.T, dir, body string) (*world, *resolution) {
	t.Helper()
	p, err := patch.Parse([]byte(wrap(body)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := worktree.NewGuard(dir, "/", worktree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.OpenTree()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.Close() })
	w := newWorld(context.Background(), dir, 0, g, tree)
	r, _, err := w.resolve(p)
	if err != nil {
		t.Fatal(err)
	}
	return w, r
}
