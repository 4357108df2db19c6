//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// syncEnd is a test's end of the synchronous channel: frames go to
// DIR/request, answers come from DIR/reply.
type syncEnd struct {
	t       *testing.T
	req     *os.File
	repFile *os.File
	rep     *bufio.Reader
}

// openSyncEnd waits for the resident to make DIR/request and opens both
// FIFOs, as the plugin does.
func openSyncEnd(t *testing.T, c *serveClient, dir string) *syncEnd {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "request")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resident slim made no %s; stderr: %s", filepath.Join(dir, "request"), c.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rep, err := os.OpenFile(filepath.Join(dir, "reply"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	req, err := os.OpenFile(filepath.Join(dir, "request"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { req.Close(); rep.Close() })
	return &syncEnd{t: t, req: req, repFile: rep, rep: bufio.NewReader(rep)}
}

func (s *syncEnd) send(frame any) {
	s.t.Helper()
	b, err := json.Marshal(frame)
	if err != nil {
		s.t.Fatal(err)
	}
	if _, err := s.req.Write(append(b, '\n')); err != nil {
		s.t.Fatalf("write frame: %v", err)
	}
}

// next reads one answer line; io.EOF once the resident is gone, a timeout
// error when nothing comes within 10 s.
func (s *syncEnd) next() (serveReply, error) {
	if err := s.repFile.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		s.t.Fatal(err)
	}
	line, err := s.rep.ReadBytes('\n')
	if err != nil {
		return serveReply{}, err
	}
	var r serveReply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("answer is not JSON: %q", line)
	}
	return r, nil
}

func syncServe(t *testing.T, bin string) (*serveClient, *syncEnd, string, string) {
	t.Helper()
	proj := t.TempDir()
	if err := exec.Command("git", "init", "-q", proj).Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startServeArgs(t, bin, proj, []string{"hook", "serve", "--sync", dir}, "SLIM_STATE_DIR="+t.TempDir(), "HOME="+proj, "XDG_CONFIG_HOME="+proj)
	return c, openSyncEnd(t, c, dir), proj, dir
}

// A hook request on the synchronous channel gets the answer it gets on
// stdin, on the reply FIFO and only there; when the resident ends, the
// reply FIFO reads as ended and the channel's names are gone.
func TestServeSyncChannelAnswersHookRequests(t *testing.T) {
	bin := buildSlim(t)
	c, s, proj, dir := syncServe(t, bin)
	host := map[string]any{"flavor": "v1", "platform": "linux", "directory": proj, "worktree": proj, "cwd": proj}
	requests := []map[string]any{
		{"v": 1, "host": host, "tool": "grep", "sessionID": "s", "callID": "g", "args": map[string]any{"pattern": "x", "path": "no-such-dir"}},
		{"v": 1, "host": host, "tool": "read", "sessionID": "s", "callID": "r", "args": map[string]any{"filePath": filepath.Join(proj, "a.txt")}},
		{"v": 1, "host": host, "tool": "apply_patch", "sessionID": "s", "callID": "p", "args": map[string]any{"patchText": "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch"}},
	}
	for i, req := range requests {
		stdinID, syncID := int64(2*i+1), int64(2*i+2)
		c.send(map[string]any{"id": stdinID, "phase": "before", "request": req})
		want := c.wait(stdinID, 10*time.Second)
		s.send(map[string]any{"id": syncID, "phase": "before", "request": req})
		got, err := s.next()
		if err != nil {
			t.Fatalf("request %d: no answer on the reply FIFO: %v; stderr: %s", i, err, c.stderr.String())
		}
		if got.ID != syncID || got.Answer == nil || want.Answer == nil {
			t.Fatalf("request %d: answer %+v, want id %d with an answer (stdin gave %+v)", i, got, syncID, want)
		}
		gb, _ := json.Marshal(got.Answer)
		wb, _ := json.Marshal(want.Answer)
		if string(gb) != string(wb) {
			t.Errorf("request %d: synchronous answer %s, stdin's %s", i, gb, wb)
		}
	}
	if a := c.wait(1, time.Second).Answer; a == nil || a.Action != "block" {
		t.Errorf("the grep on a missing path: %+v, want a block", a)
	}
	if a := c.wait(5, time.Second).Answer; a == nil || a.Action != "block" {
		t.Errorf("the patch outside: %+v, want a block", a)
	}
	// A request slim cannot act on gets its error there too.
	s.send(map[string]any{"id": 50, "phase": "before", "request": map[string]any{"v": 99}})
	if r, err := s.next(); err != nil || r.ID != 50 || r.Error == nil {
		t.Errorf("a bad request: %+v, %v; want its error", r, err)
	}
	c.stdin.Close()
	if err := c.waitExit(10 * time.Second); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, c.stderr.String())
	}
	for _, id := range []int64{2, 4, 6, 50} {
		if c.has(id) {
			t.Errorf("request %d of the synchronous channel was answered on stdout", id)
		}
	}
	if r, err := s.next(); err == nil {
		t.Errorf("after the resident ended the reply FIFO gave %+v, want its end", r)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the channel's directory is still there after the resident ended: %v", err)
	}
}

// The synchronous channel takes hook requests only: a run or a cancel
// there ends the server (exit 2) without running anything.
func TestServeSyncChannelRefusesRuns(t *testing.T) {
	bin := buildSlim(t)
	for name, frame := range map[string]map[string]any{
		"run":    {"id": 1, "run": serveRun{Args: []string{"search", "glob", "*"}}},
		"cancel": {"id": 1, "cancel": true},
	} {
		t.Run(name, func(t *testing.T) {
			c, s, _, _ := syncServe(t, bin)
			s.send(frame)
			err := c.waitExit(10 * time.Second)
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want 2", err)
			}
			if !strings.Contains(c.stderr.String(), "the synchronous channel takes hook requests only") {
				t.Errorf("stderr: %s", c.stderr.String())
			}
			if r, err := s.next(); err == nil {
				t.Errorf("the refused frame was answered: %+v", r)
			}
		})
	}
}

// --sync makes its FIFOs only in a directory of the user's that nobody
// else can open, and needs a directory at all.
func TestServeSyncNeedsAPrivateDirectory(t *testing.T) {
	bin := buildSlim(t)
	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"readable by others", []string{"--sync", open}, "that only you can open"},
		{"missing", []string{"--sync", filepath.Join(open, "none")}, "no such file"},
		{"a file", []string{"--sync=" + file}, "is not a directory"},
		{"no directory", []string{"--sync"}, "want no arguments or --sync DIR"},
		{"empty", []string{"--sync="}, "--sync needs a directory"},
		{"another argument", []string{"--other"}, "want no arguments or --sync DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := processRun(t, bin, t.TempDir(), "", nil, append([]string{"hook", "serve"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(open); len(entries) != 0 {
		t.Errorf("FIFOs were made in the open directory: %v", entries)
	}
}

// Frames already written to the synchronous channel when stdin ends are
// still answered there before the resident exits (the plugin closes stdin
// at dispose, right after the last call's after).
func TestServeSyncChannelAnswersWhatWasSentBeforeStdinEnded(t *testing.T) {
	bin := buildSlim(t)
	c, s, proj, _ := syncServe(t, bin)
	const n = 40
	for i := 1; i <= n; i++ {
		s.send(map[string]any{"id": i, "phase": "after", "request": map[string]any{
			"v": 1, "tool": "read", "sessionID": "s", "callID": fmt.Sprint("c", i),
			"args": map[string]any{"filePath": filepath.Join(proj, fmt.Sprint("f", i))}, "output": "x",
		}})
	}
	c.stdin.Close()
	seen := map[int64]bool{}
	for {
		r, err := s.next()
		if err != nil {
			break
		}
		if r.Answer == nil {
			t.Errorf("frame %d: %+v, want an answer", r.ID, r)
		}
		seen[r.ID] = true
	}
	if err := c.waitExit(10 * time.Second); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, c.stderr.String())
	}
	if len(seen) != n {
		t.Errorf("%d of the %d frames sent before stdin ended were answered", len(seen), n)
	}
}
