package ochost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
	"github.com/slimgate/slim/internal/testbin"
)

// TestMain removes the slim binary testbin.Shared built once the tests end.
func TestMain(m *testing.M) { os.Exit(testbin.M(m).Run()) }

// pinnedHost returns the pinned OpenCode the end-to-end tests install
// (SLIM_E2E_OPENCODE names another), or skips the test without it;
// SLIM_E2E=require makes a missing host a failure, SLIM_E2E=off skips.
func pinnedHost(t *testing.T) string {
	t.Helper()
	mode := strings.ToLower(os.Getenv("SLIM_E2E"))
	if mode == "off" {
		t.Skip("SLIM_E2E=off")
	}
	bin := os.Getenv("SLIM_E2E_OPENCODE")
	if bin == "" {
		bin = filepath.Join("..", "..", "..", "e2e", "node_modules", ".bin", "opencode")
	}
	abs, err := filepath.Abs(bin)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		if mode == "require" {
			t.Fatalf("SLIM_E2E=require: no OpenCode host: %v", err)
		}
		t.Skipf("no OpenCode host (%v); scripts/e2e-setup.sh installs it", err)
	}
	return abs
}

// The whole package against the real host: slim's plugin installed, one
// read and one apply_patch, both timed, the edit made and nothing logged.
func TestARealHostRunWithThePlugin(t *testing.T) {
	host := pinnedHost(t)
	slim := testbin.Shared(t)
	p, err := New(t.TempDir(), slim, map[string]string{"a.txt": "one\ntwo\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Install(slim); err != nil {
		t.Fatal(err)
	}
	r, err := p.Run(host, []fp.Turn{
		fp.Calls(fp.Call("read", map[string]string{"filePath": p.Path("a.txt")})),
		fp.Calls(fp.Call("apply_patch", map[string]string{"patchText": "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+three\n*** End Patch"})),
		fp.Text("done"),
	}, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Parts) != 2 || r.Parts[0].Tool != "read" || r.Parts[1].Tool != "apply_patch" {
		t.Fatalf("parts %+v, want a read and an apply_patch", r.Parts)
	}
	for _, part := range r.Parts {
		if part.Status != "completed" || part.Start == 0 || part.End < part.Start {
			t.Errorf("part %+v did not complete with times", part)
		}
	}
	if !strings.HasPrefix(r.SessionID, "ses_") || len(r.Requests) < 3 || r.Wall < time.Second {
		t.Errorf("session %q, %d requests, wall %s", r.SessionID, len(r.Requests), r.Wall)
	}
	if b, err := os.ReadFile(p.Path("a.txt")); err != nil || string(b) != "one\nthree\n" {
		t.Errorf("a.txt = %q, %v; the edit did not land", b, err)
	}
	if problems, err := p.PluginProblems(); err != nil || len(problems) > 0 {
		t.Errorf("the plugin logged problems: %v %v", problems, err)
	}
	if _, err := os.Stat(filepath.Join(p.StateDir, "loop")); err != nil {
		t.Errorf("slim kept no loop guard state, so the plugin never ran it: %v", err)
	}
}
