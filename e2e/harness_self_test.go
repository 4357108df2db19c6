package e2e

import (
	"strings"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// The harness's own promise: a host that hangs (here, on a model that never
// answers, or still starting on a busy machine) is killed, process group and all, when its hard timeout expires,
// and the test learns that it timed out.
func TestHarnessKillsHungHost(t *testing.T) {
	t.Parallel()
	p := newProject(t, noPlugin, map[string]string{"a.txt": "a\n"})
	const limit = 12 * time.Second
	r := p.runWithTimeout(limit, fp.Turn{Text: "too late", DelayMS: int(time.Hour / time.Millisecond)})
	if !r.timedOut {
		t.Fatalf("the run was not reported as timed out (exit %v after %v)", r.exitErr, r.elapsed)
	}
	if r.elapsed < limit || r.elapsed > limit+10*time.Second {
		t.Errorf("the run ended after %v, want just over %v", r.elapsed, limit)
	}
	if groupAlive(r.pid) {
		t.Errorf("processes of the host's group %d are still running", r.pid)
	}
	// On a busy machine the host may still be starting when the time is up;
	// either way it must not have got past the hanging request.
	if n := len(r.provider.ScriptedRequests()); n > 1 {
		t.Errorf("the host made %d model requests, want at most the 1 that hung", n)
	}
	if strings.Contains(r.stdout, "too late") {
		t.Errorf("the delayed answer reached the host")
	}
}
