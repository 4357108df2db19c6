package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks/protocol"
)

// The grep/glob pre-check through the dispatcher, with the real search
// package and real directories.
func TestSearchPrecheckThroughHook(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "file.txt"), []byte("x"), 0o644)
	hostJSON, _ := json.Marshal(map[string]string{"flavor": "v1", "platform": "linux", "directory": root, "worktree": root, "cwd": root})

	h := newHarness(t)
	h.host = string(hostJSON)
	h.d.SearchGuard = true

	// A missing absolute path blocks.
	missing := filepath.Join(root, "does-not-exist", "missing.txt")
	_, r := h.before("grep", "s", args("pattern", "x", "path", missing))
	if r.Action != protocol.Block || !strings.HasPrefix(r.Message, "Search path does not exist: ") || !strings.Contains(r.Message, missing) {
		t.Errorf("missing absolute path: %+v", r)
	}
	// So does a missing relative directory for glob.
	_, r = h.before("glob", "s", args("pattern", "*", "path", "no-such-dir"))
	if r.Action != protocol.Block || !strings.Contains(r.Message, filepath.Join(root, "no-such-dir")) {
		t.Errorf("missing relative directory: %+v", r)
	}
	// Existing paths pass.
	if _, r = h.before("grep", "s", args("pattern", "x", "path", filepath.Join(root, "file.txt"))); r.Action != protocol.Pass {
		t.Errorf("existing file: %+v", r)
	}
	if _, r = h.before("glob", "s", args("pattern", "*", "path", "src")); r.Action != protocol.Pass {
		t.Errorf("existing directory: %+v", r)
	}
	// Tool names match exactly: "Grep" is not pre-checked.
	if _, r = h.before("Grep", "s", args("pattern", "x", "path", missing)); r.Action != protocol.Pass {
		t.Errorf("Grep: %+v", r)
	}
	// A file where a directory must be (ENOTDIR) blocks.
	_, r = h.before("grep", "s", args("pattern", "x", "path", "file.txt/child"))
	if r.Action != protocol.Block || !strings.HasPrefix(r.Message, "Search path is invalid: ") || !strings.Contains(r.Message, "ENOTDIR") {
		t.Errorf("ENOTDIR: %+v", r)
	}

	// A stale absolute path is re-anchored: mutate with every other key
	// kept, and the loop guard counts the re-anchored args, so the stale
	// spelling and the real one are the same call.
	stale := filepath.Join("/old/home", filepath.Base(root), "src")
	want := filepath.Join(root, "src")
	var results []result
	for i := 0; i < 2; i++ {
		id, r := h.before("grep", "s2", args("pattern", "TODO", "include", "*.go", "path", stale))
		if r.Action != protocol.Mutate || r.Args["path"] != want || r.Args["pattern"] != "TODO" || r.Args["include"] != "*.go" || len(r.Args) != 3 {
			t.Fatalf("stale absolute path: %+v", r)
		}
		a := h.after("grep", "s2", id, "No files found", "")
		results = append(results, result{notice: a.Action == protocol.Append})
	}
	results = append(results, h.call("grep", "s2", args("pattern", "TODO", "include", "*.go", "path", want), "No files found"))
	expect(t, "stale and re-anchored spellings count as one call", results, "..N")
}

// A blocked pre-check wins over the loop guard and records nothing.
func TestFirstBlockWins(t *testing.T) {
	root := t.TempDir()
	hostJSON, _ := json.Marshal(map[string]string{"flavor": "v2", "platform": "linux", "directory": root, "cwd": root})
	h := newHarness(t)
	h.host = string(hostJSON)
	h.d.SearchGuard = true
	for i := 0; i < 7; i++ {
		if _, r := h.before("glob", "s", args("pattern", "*", "path", "gone")); r.Action != protocol.Block || !strings.HasPrefix(r.Message, "Search path does not exist") {
			t.Fatalf("call %d: %+v", i, r)
		}
	}
	if _, err := os.Stat(h.store.Path("s")); !os.IsNotExist(err) {
		t.Fatalf("a blocked call was recorded: %v", err)
	}
}
