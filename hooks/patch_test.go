package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/rescue"
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
			h.d.PatchGuard = true
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
	h.d.PatchGuard = true
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

// beforePatch sends one apply_patch before request through d.
func beforePatch(t *testing.T, d *Dispatcher, root, patch string) protocol.Response {
	t.Helper()
	host, _ := json.Marshal(map[string]string{"flavor": "v1", "platform": "linux", "directory": root, "worktree": root, "cwd": root})
	data, _ := json.Marshal(map[string]any{"v": 1, "phase": "before", "host": json.RawMessage(host), "tool": "apply_patch", "callID": "c", "args": map[string]any{"patchText": patch}})
	req, err := protocol.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := req.Validate(protocol.Before); err != nil {
		t.Fatal(err)
	}
	return d.Handle(req)
}

const budgetPrefix = "apply_patch blocked: slim could not finish checking this patch within its time budget"

// A check that does not finish within the budget blocks the call at the
// deadline, even when the guard never looks at its context.
func TestPatchBudgetBlocksAtTheDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	d := &Dispatcher{PatchGuard: true, PatchBudget: 50 * time.Millisecond, process: func(patch []byte, opts rescue.Options) (*rescue.Result, error) {
		<-release // ignores opts.Context on purpose
		return &rescue.Result{Decision: rescue.DecisionUnchanged}, nil
	}}
	t0 := time.Now()
	r := beforePatch(t, d, t.TempDir(), "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch")
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("answered after %v with a 50ms budget", el)
	}
	if r.Action != protocol.Block || !strings.HasPrefix(r.Message, budgetPrefix) || !strings.Contains(r.Message, "50ms") {
		t.Fatalf("%+v", r)
	}
	if len(r.Notes) == 0 || r.Notes[0] != "apply_patch: blocked" {
		t.Errorf("notes %q", r.Notes)
	}
}

// The check gets the budget as its context's deadline.
func TestPatchGuardSeesTheBudgetDeadline(t *testing.T) {
	var left time.Duration
	d := &Dispatcher{PatchGuard: true, PatchBudget: time.Minute, process: func(patch []byte, opts rescue.Options) (*rescue.Result, error) {
		dl, ok := opts.Context.Deadline()
		if !ok {
			t.Error("no deadline")
		}
		left = time.Until(dl)
		return &rescue.Result{Decision: rescue.DecisionUnchanged}, nil
	}}
	if r := beforePatch(t, d, t.TempDir(), "p"); r.Action != protocol.Pass {
		t.Fatalf("%+v", r)
	}
	if left < 50*time.Second || left > time.Minute {
		t.Errorf("deadline %v away, want about a minute", left)
	}
	d.PatchBudget = 0
	beforePatch(t, d, t.TempDir(), "p")
	if left < DefaultPatchBudget-time.Second || left > DefaultPatchBudget {
		t.Errorf("default deadline %v away, want %v", left, DefaultPatchBudget)
	}
}

// The real engine under a budget too small for its patch: blocked with the
// budget message, never handed on unchecked.
func TestRescueOverBudgetIsBlocked(t *testing.T) {
	root := t.TempDir()
	var file, patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for f := 0; f < 20; f++ {
		file.Reset()
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&file, "line %d of file %d\n", i, f)
		}
		name := fmt.Sprintf("f%d.txt", f)
		os.WriteFile(filepath.Join(root, name), []byte(file.String()), 0o644)
		fmt.Fprintf(&patch, "*** Update File: %s\n", name)
		for i := 10; i < 2000; i += 100 {
			// stale context: found only by the tolerant rungs
			fmt.Fprintf(&patch, "@@\n line %d of file %d  \n-line %d of file %d\n+changed %d\n", i-1, f, i, f, i)
		}
	}
	patch.WriteString("*** End Patch")
	d := &Dispatcher{PatchGuard: true, PatchBudget: time.Millisecond}
	r := beforePatch(t, d, root, patch.String())
	if r.Action != protocol.Block || !strings.HasPrefix(r.Message, budgetPrefix) {
		t.Fatalf("%s %.200q", r.Action, r.Message)
	}
	d.PatchBudget = time.Minute
	if r := beforePatch(t, d, root, patch.String()); r.Action != protocol.Mutate {
		t.Fatalf("with time to finish: %s %.300q", r.Action, r.Message)
	}
}

// A check that fails, or panics, blocks the patch: apply_patch fails closed.
func TestPatchGuardFailureBlocks(t *testing.T) {
	for name, check := range map[string]func([]byte, rescue.Options) (*rescue.Result, error){
		"error": func([]byte, rescue.Options) (*rescue.Result, error) {
			return nil, errors.New("disk on fire")
		},
		"panic": func([]byte, rescue.Options) (*rescue.Result, error) { panic("disk on fire") },
	} {
		t.Run(name, func(t *testing.T) {
			r := beforePatch(t, &Dispatcher{PatchGuard: true, process: check}, t.TempDir(), "p")
			if r.Action != protocol.Block || !strings.HasPrefix(r.Message, "apply_patch internal error: ") || !strings.Contains(r.Message, "disk on fire") {
				t.Fatalf("%+v", r)
			}
		})
	}
}

// A hard-linked target is not refused (it is inside), but the answer says
// what `slim worktree check` says about it.
func TestHardLinkedTargetPassesWithAWarning(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\nworld\n"), 0o644)
	if err := os.Link(filepath.Join(root, "a.txt"), filepath.Join(root, "b.txt")); err != nil {
		t.Skip("no hard links here:", err)
	}
	os.WriteFile(filepath.Join(root, "c.txt"), []byte("plain\n"), 0o644)
	d := &Dispatcher{PatchGuard: true}
	r := beforePatch(t, d, root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+HELLO\n*** End Patch")
	if r.Action != protocol.Pass {
		t.Fatalf("%+v", r)
	}
	if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "apply_patch: warning: ") || !strings.Contains(r.Notes[0], "has 2 hard links") {
		t.Fatalf("notes %q", r.Notes)
	}
	// Two hunks on the file (merged into one rewrite): the warning once.
	r = beforePatch(t, d, root, "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+HELLO\n*** Update File: a.txt\n@@\n-world\n+WORLD\n*** End Patch")
	if r.Action == protocol.Block {
		t.Fatalf("%+v", r)
	}
	warnings := 0
	for _, n := range r.Notes {
		if strings.HasPrefix(n, "apply_patch: warning: ") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("notes %q", r.Notes)
	}
	r = beforePatch(t, d, root, "*** Begin Patch\n*** Update File: c.txt\n@@\n-plain\n+PLAIN\n*** End Patch")
	if r.Action != protocol.Pass || len(r.Notes) != 0 {
		t.Fatalf("a plain file: %+v", r)
	}
}

// A request too large to read blocks apply_patch in before and is left to
// fail open for every other tool and phase.
func TestTooLargeRequest(t *testing.T) {
	d := &Dispatcher{PatchGuard: true}
	tl := &protocol.TooLargeError{Limit: protocol.MaxRequestBytes, Tool: "apply_patch"}
	r, ok := d.TooLarge(protocol.Before, tl)
	if !ok || r.Action != protocol.Block || !strings.HasPrefix(r.Message, "apply_patch blocked: the request is larger than 64 MiB") {
		t.Fatalf("%v %+v", ok, r)
	}
	for _, c := range []struct {
		phase protocol.Phase
		tool  string
	}{{protocol.After, "apply_patch"}, {protocol.Before, "read"}, {protocol.Before, ""}, {protocol.Before, "Apply_Patch"}} {
		if _, ok := d.TooLarge(c.phase, &protocol.TooLargeError{Limit: 1, Tool: c.tool}); ok {
			t.Errorf("%s %q: answered", c.phase, c.tool)
		}
	}
}
