package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/bench/internal/ochost"
	fp "github.com/slimgate/slim/fixtures/fakeprovider"
	"github.com/slimgate/slim/hooks/loopguard"
)

// goodRun is a run of s in p as it should end: every call completed with
// what it should show, every edit made; with the plugin, slim's record of
// the session written after the last call started.
func goodRun(t *testing.T, s *session, p *ochost.Project, m mode) *ochost.Run {
	t.Helper()
	r := &ochost.Run{SessionID: "ses_good", Requests: []fp.Request{
		{Turn: -1},
		{Tools: []string{"apply_patch", "bash", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch"}},
	}}
	for i, c := range s.calls {
		start := int64(1_000_000 + 100*i)
		r.Parts = append(r.Parts, ochost.Part{Tool: c.tool, CallID: c.id, Status: "completed", Output: "result: " + c.want, Start: start, End: start + 40})
	}
	for name, text := range s.final {
		if err := os.WriteFile(p.Path(name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if m.plugin {
		writeRecord(t, p, r.SessionID, time.UnixMilli(r.Parts[len(r.Parts)-1].Start+20))
	}
	return r
}

func writeRecord(t *testing.T, p *ochost.Project, session string, at time.Time) {
	t.Helper()
	path := loopguard.NewStore(p.StateDir, loopguard.StoreOptions{}).Path(session)
	b, err := json.Marshal(loopguard.State{Version: 1, Session: session, UpdatedAt: at, Last: loopguard.Last{Args: "x", Runs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendLog(t *testing.T, p *ochost.Project, line string) {
	t.Helper()
	f, err := os.OpenFile(p.PluginLog, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

func TestCheckPassesAGoodRunInEveryMode(t *testing.T) {
	for _, m := range []mode{noPlugin, withPlugin, perCall} {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSession(filepath.Join(dir, "proj"))
			p, err := ochost.New(dir, "", s.files)
			if err != nil {
				t.Fatal(err)
			}
			r := goodRun(t, s, p, m)
			appendLog(t, p, `{"level":"info","message":"slim notes"}`)
			if err := check(s, p, r, m); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCheckRefusesARunThatDidNotDoItsWork(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  mode
		spoil func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run)
		want  string
	}{
		{"a call ended in an error", withPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Parts[7].Status, r.Parts[7].Error = "error", "boom"
		}, "ended error"},
		{"a call went missing", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Parts = r.Parts[:len(r.Parts)-1]
		}, "59 tool parts"},
		{"a call was reported twice", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Parts[3] = r.Parts[2]
		}, "reported twice"},
		{"the host turned a call into another tool", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Parts[0].Tool = "invalid"
		}, "ran invalid"},
		{"a call did not show what it should", withPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Parts[1].Output = "[REPEATED TOOL CALLS - STOP]"
		}, "without"},
		{"the host offered no todowrite", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			r.Requests[1].Tools = []string{"apply_patch", "bash", "glob", "grep", "read"}
		}, "did not offer todowrite"},
		{"an edit did not land", withPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			if err := os.WriteFile(p.Path(sourceName(2)), []byte(s.files[sourceName(2)]), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "src/f02.go is not as the edits leave it"},
		{"a file nobody edits changed", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			if err := os.WriteFile(p.Path("README.md"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "README.md"},
		{"the plugin logged a problem with slim", perCall, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			appendLog(t, p, `{"level":"warn","message":"slim exited 2; passing"}`)
		}, "plugin logged 1 problems"},
		{"the plugin lost its resident slim", withPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			appendLog(t, p, `{"level":"info","message":"resident slim exited (1)"}`)
		}, "lost its resident slim"},
		{"slim never counted the last calls", withPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			writeRecord(t, p, r.SessionID, time.UnixMilli(r.Parts[0].End))
		}, "did not see every call"},
		{"slim kept no record of the session", perCall, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			if err := os.RemoveAll(filepath.Join(p.StateDir, "loop")); err != nil {
				t.Fatal(err)
			}
		}, "did not see every call"},
		{"slim ran in the session without the plugin", noPlugin, func(t *testing.T, s *session, p *ochost.Project, r *ochost.Run) {
			writeRecord(t, p, r.SessionID, time.Now())
		}, "without the plugin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSession(filepath.Join(dir, "proj"))
			p, err := ochost.New(dir, "", s.files)
			if err != nil {
				t.Fatal(err)
			}
			r := goodRun(t, s, p, tc.mode)
			tc.spoil(t, s, p, r)
			err = check(s, p, r, tc.mode)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("check = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
