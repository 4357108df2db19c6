//go:build unix

package ochost

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// fakeHost writes a shell script that stands in for `opencode` and
// returns its path.
func fakeHost(t *testing.T, body string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "opencode")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestRunTimesTheHostAndReadsItsParts(t *testing.T) {
	p, err := New(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.AddEnv("SLIM_SERVE=0")
	host := fakeHost(t, `[ "$1 $2 $3" = "run --format json" ] || exit 9
[ "$SLIM_SERVE" = 0 ] || exit 7
grep -q '"baseURL":"http://127.0.0.1:' opencode.json || exit 8
echo '{"type":"tool_use","sessionID":"ses_x","part":{"tool":"read","callID":"c1","state":{"status":"completed","output":"ok","time":{"start":5,"end":7}}}}'
`)
	r, err := p.Run(host, []fp.Turn{fp.Text("done")}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.SessionID != "ses_x" || len(r.Parts) != 1 || r.Parts[0].Duration() != 2*time.Millisecond || r.Wall <= 0 {
		t.Errorf("run = %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, "stdout.jsonl")); err != nil || !strings.Contains(string(b), "ses_x") {
		t.Errorf("the host's output was not kept: %q, %v", b, err)
	}
}

func TestRunReportsAFailingHost(t *testing.T) {
	p, err := New(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(fakeHost(t, "echo 'cannot start' >&2; exit 3\n"), nil, time.Minute)
	e, ok := AsError(err)
	if !ok || e.Kind != Host || e.Code != CodeRun || !strings.Contains(e.Message, "cannot start") || !strings.Contains(e.Message, p.Root) {
		t.Fatalf("err = %v, want a %s error %s with the host's stderr and the artifacts' place", err, Host, CodeRun)
	}
}

func TestRunKillsEverythingTheHostStartedOnTimeout(t *testing.T) {
	p, err := New(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(p.Root, "child.pid")
	host := fakeHost(t, "sleep 60 &\necho $! > "+pidFile+"\nwait\n")
	start := time.Now()
	_, err = p.Run(host, nil, 500*time.Millisecond)
	if e, ok := AsError(err); !ok || e.Code != CodeTimeout {
		t.Fatalf("err = %v, want %s", err, CodeTimeout)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s after a 500ms timeout", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The child is killed with its group; give the kernel a moment to
	// reap it (it is re-parented once its shell dies).
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("the host's child %d outlived the run", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
