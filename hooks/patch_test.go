package hooks

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks/protocol"
)

// apply_patch through the dispatcher with the real rescue engine: the hook
// hands on a patch (mutate or pass) or refuses it, and never writes a file.
func TestApplyPatchThroughHook(t *testing.T) {
	root := t.TempDir()
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	}
	file := filepath.Join(root, "a.txt")
	orig := "hello  \nworld\n" // trailing spaces the author did not see
	os.WriteFile(file, []byte(orig), 0o644)
	host, _ := json.Marshal(map[string]string{"flavor": "v1", "platform": "linux", "directory": root, "worktree": root, "cwd": root})

	patch := func(body string) string { return "*** Begin Patch\n" + body + "*** End Patch" }
	cases := []struct {
		name    string
		outside string
		patch   string
		action  protocol.Action
		prefix  string // message prefix for block
		check   func(t *testing.T, r protocol.Response)
	}{
		{name: "rescued patch is handed on rewritten, other keys kept", patch: patch("*** Update File: a.txt\n@@\n-hello\n+HELLO\n world\n"), action: protocol.Mutate,
			check: func(t *testing.T, r protocol.Response) {
				pt, _ := r.Args["patchText"].(string)
				if !strings.Contains(pt, "-hello  \n") || !strings.Contains(pt, "+HELLO\n") {
					t.Errorf("rewritten patch %q", pt)
				}
				if r.Args["description"] != "edit" || len(r.Args) != 2 {
					t.Errorf("args not kept: %#v", r.Args)
				}
			}},
		{name: "exact patch passes", patch: patch("*** Update File: a.txt\n@@\n-world\n+WORLD\n"), action: protocol.Pass},
		{name: "outside is blocked", patch: patch("*** Add File: ../outside.txt\n+x\n"), action: protocol.Block, prefix: "apply_patch blocked: "},
		{name: "outside by spelling passes under passthrough", outside: "passthrough", patch: patch("*** Add File: ../outside.txt\n+x\n"), action: protocol.Pass},
		{name: ".git stays blocked under passthrough", outside: "passthrough", patch: patch("*** Add File: .git/hooks/pre-commit\n+x\n"), action: protocol.Block, prefix: "apply_patch blocked: "},
		{name: "malformed is blocked", patch: "not a patch at all", action: protocol.Block, prefix: "apply_patch validation failed: "},
		{name: "no match is blocked", patch: patch("*** Update File: a.txt\n@@\n-something else entirely\n+x\n"), action: protocol.Block, prefix: "apply_patch verification failed: "},
		{name: "missing file is blocked", patch: patch("*** Update File: nope.txt\n@@\n-a\n+b\n"), action: protocol.Block, prefix: "apply_patch verification failed: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.host = string(host)
			h.d.Patch = RescuePatch
			h.d.Outside = c.outside
			_, r := h.before("apply_patch", "s", map[string]any{"patchText": c.patch, "description": "edit"})
			if r.Action != c.action {
				t.Fatalf("action %q, want %q: %+v", r.Action, c.action, r)
			}
			if c.prefix != "" && !strings.HasPrefix(r.Message, c.prefix) {
				t.Errorf("message %q, want prefix %q", r.Message, c.prefix)
			}
			if c.check != nil {
				c.check(t, r)
			}
			if got, _ := os.ReadFile(file); string(got) != orig {
				t.Errorf("the hook changed a.txt: %q", got)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(root), "outside.txt")); err == nil {
				t.Errorf("the hook wrote outside the root")
			}
		})
	}
}

// The loop guard fingerprints the rescued patch: a stale patch and its
// rescued form are the same call.
func TestLoopGuardSeesRescuedPatch(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello  \nworld\n"), 0o644)
	host, _ := json.Marshal(map[string]string{"platform": "linux", "directory": root, "worktree": "/", "cwd": root})
	h := newHarness(t)
	h.host = string(host)
	h.d.Patch = RescuePatch
	stale := "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+HELLO\n world\n*** End Patch"
	id, r := h.before("apply_patch", "s", map[string]any{"patchText": stale})
	if r.Action != protocol.Mutate {
		t.Fatalf("%+v", r)
	}
	rescued := r.Args["patchText"].(string)
	h.after("apply_patch", "s", id, "Success.", "")
	h.call("apply_patch", "s", map[string]any{"patchText": stale}, "Success.")
	// The rescued text as such is already exact: it passes, and it is the
	// same call as the two before it.
	res := h.call("apply_patch", "s", map[string]any{"patchText": rescued}, "Success.")
	if !res.notice {
		t.Fatalf("the rescued patch was fingerprinted apart from the stale one")
	}
}
