package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// serveClient drives one real `slim hook serve` process: frames go down
// its stdin, replies are collected by id.
type serveClient struct {
	t       *testing.T
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  bytes.Buffer
	mu      sync.Mutex
	replies map[int64]serveReply
	arrived chan int64
	done    chan struct{}
}

func startServe(t *testing.T, bin, dir string, env ...string) *serveClient {
	t.Helper()
	return startServeArgs(t, bin, dir, []string{"hook", "serve"}, env...)
}

// startServeArgs is startServe with the command line's arguments.
func startServeArgs(t *testing.T, bin, dir string, args []string, env ...string) *serveClient {
	t.Helper()
	c := &serveClient{t: t, replies: map[int64]serveReply{}, arrived: make(chan int64, 64), done: make(chan struct{})}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Dir = dir
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 80<<20)
		for sc.Scan() {
			var r serveReply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Errorf("reply is not JSON: %q", sc.Text())
				continue
			}
			c.mu.Lock()
			if _, dup := c.replies[r.ID]; dup {
				t.Errorf("two replies for id %d", r.ID)
			}
			c.replies[r.ID] = r
			c.mu.Unlock()
			c.arrived <- r.ID
		}
	}()
	t.Cleanup(func() {
		c.stdin.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
		}
		if c.cmd.ProcessState == nil {
			c.cmd.Wait()
		}
	})
	return c
}

func (c *serveClient) send(frame any) {
	c.t.Helper()
	b, err := json.Marshal(frame)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write frame: %v", err)
	}
}

func (c *serveClient) run(id int64, stdin string, args ...string) {
	c.send(map[string]any{"id": id, "run": serveRun{Args: args, Stdin: stdin}})
}

// wait returns the reply for id, failing the test if none comes within d.
func (c *serveClient) wait(id int64, d time.Duration) serveReply {
	c.t.Helper()
	deadline := time.After(d)
	for {
		c.mu.Lock()
		r, ok := c.replies[id]
		c.mu.Unlock()
		if ok {
			return r
		}
		select {
		case <-c.arrived:
		case <-c.done:
			c.mu.Lock()
			r, ok := c.replies[id]
			c.mu.Unlock()
			if ok {
				return r
			}
			c.t.Fatalf("the resident slim ended without answering %d; stderr: %s", id, c.stderr.String())
		case <-deadline:
			c.t.Fatalf("no reply for %d within %v", id, d)
		}
	}
}

// waitExit waits for the process to end, at most d (then it is killed and
// the test fails).
func (c *serveClient) waitExit(d time.Duration) error {
	c.t.Helper()
	select {
	case <-c.done:
	case <-time.After(d):
		c.cmd.Process.Kill()
		c.t.Fatalf("the resident slim did not end within %v", d)
	}
	return c.cmd.Wait()
}

// has reports whether id has been answered.
func (c *serveClient) has(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.replies[id]
	return ok
}

// processRun runs bin with args and stdin as a process of its own, in dir,
// and returns what it printed and its exit code.
func processRun(t *testing.T, bin, dir, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// A command the resident slim runs answers exactly as the same command in
// a process of its own: exit code, stdout and stderr, successes and
// failures alike.
func TestServedRunAnswersAsItsProcessWould(t *testing.T) {
	bin := buildSlim(t)
	dir := t.TempDir()
	git := exec.Command("git", "init", "-q", dir)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for name, body := range map[string]string{"a.go": "package a\n// needle one\n", "sub/b.txt": "needle two\n", "sub/c.txt": "hay\n"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Served</title></head><body><nav>menu</nav><main><h1>Served</h1><p>The page body, long enough to be the main content of this page.</p></main></body></html>")
	}))
	defer web.Close()
	env := []string{"SLIM_STATE_DIR=" + t.TempDir(), "SLIM_FETCH_ALLOW_PRIVATE=1", "SLIM_FETCH_CACHE=off", "XDG_CACHE_HOME=" + t.TempDir()}
	cases := []struct {
		name  string
		stdin string
		args  []string
		exit  int // what the process exits with, checked too
	}{
		{"grep finds matches", "", []string{"search", "grep", "--root", dir, "needle"}, 0},
		{"grep as JSON", "", []string{"search", "grep", "--root", dir, "--json", "needle"}, 0},
		{"glob", "", []string{"search", "glob", "--root", dir, "**/*.txt"}, 0},
		{"grep refuses a path outside", "", []string{"search", "grep", "--root", dir, "--path", "..", "needle"}, 5},
		{"a task tool's refusal", "{}", []string{"tasks", "status"}, 1},
		{"a bad flag", "", []string{"search", "grep", "--no-such-flag", "x"}, 2},
		{"fetch", "", []string{"fetch", "--json", web.URL + "/page"}, 0},
		{"fetch from stdin", `{"url":"` + web.URL + `/page","format":"text"}`, []string{"fetch", "-"}, 0},
	}
	c := startServe(t, bin, dir, env...)
	for i, tc := range cases {
		c.run(int64(i+1), tc.stdin, tc.args...)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.wait(int64(i+1), 30*time.Second)
			out, errs, code := processRun(t, bin, dir, tc.stdin, env, tc.args...)
			if code != tc.exit {
				t.Fatalf("the process exited %d, want %d (stdout %q, stderr %q)", code, tc.exit, out, errs)
			}
			if got.Exit == nil || *got.Exit != code {
				t.Errorf("served exit %v, process exit %d", got.Exit, code)
			}
			if got.Stdout != out {
				t.Errorf("served stdout differs from the process's:\n%s\n---\n%s", got.Stdout, out)
			}
			if got.Stderr != errs {
				t.Errorf("served stderr %q, process stderr %q", got.Stderr, errs)
			}
			if tc.exit == 0 && out == "" {
				t.Errorf("no output to compare")
			}
		})
	}
}

// slowPage is a web server whose every page waits until the request is
// cancelled or the test ends; started reports each request that arrived,
// gone each whose client went away.
type slowPage struct {
	srv            *httptest.Server
	started, gone  chan struct{}
	release        chan struct{}
	releaseOnClose sync.Once
}

func newSlowPage(t *testing.T) *slowPage {
	s := &slowPage{started: make(chan struct{}, 64), gone: make(chan struct{}, 64), release: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.started <- struct{}{}
		select {
		case <-r.Context().Done():
			s.gone <- struct{}{}
		case <-s.release:
		}
	}))
	t.Cleanup(func() {
		s.releaseOnClose.Do(func() { close(s.release) })
		s.srv.Close()
	})
	return s
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// A cancel frame ends a run the way SIGTERM ends a process: the fetch's
// connection is closed and the run answers with a failure at once; hook
// requests and other runs are answered meanwhile, even with every run
// slot taken.
func TestServedRunCancelledAndHooksNotHeldUp(t *testing.T) {
	bin := buildSlim(t)
	dir := t.TempDir()
	page := newSlowPage(t)
	c := startServe(t, bin, dir, "SLIM_STATE_DIR="+t.TempDir(), "SLIM_FETCH_ALLOW_PRIVATE=1", "SLIM_FETCH_CACHE=off")
	// Every run slot holds a fetch that does not end by itself, and one
	// more waits for a slot.
	for i := 1; i <= serveRuns+1; i++ {
		c.run(int64(i), "", "fetch", "--json", "--timeout", "100", page.srv.URL+fmt.Sprintf("/p%d", i))
	}
	for i := 0; i < serveRuns; i++ {
		waitFor(t, page.started, "the fetches to reach the server")
	}
	c.send(map[string]any{"id": 100, "phase": "before", "request": map[string]any{"v": 1, "tool": "task", "sessionID": "s", "callID": "c", "args": map[string]any{}}})
	if r := c.wait(100, 10*time.Second); r.Answer == nil || r.Answer.Action != "pass" {
		t.Fatalf("hook request not answered while the runs hang: %+v", r)
	}
	c.run(101, "{}", "tasks", "status")
	// The run waits for a slot like the ninth fetch; it has not run.
	time.Sleep(200 * time.Millisecond)
	if c.has(101) || c.has(serveRuns+1) {
		t.Fatalf("a run was answered although every slot was taken")
	}
	// Cancel the first fetch: its connection goes and it answers.
	c.send(map[string]any{"id": 1, "cancel": true})
	r := c.wait(1, 10*time.Second)
	waitFor(t, page.gone, "the cancelled fetch to close its connection")
	if r.Exit == nil || *r.Exit == 0 {
		t.Fatalf("a cancelled fetch answered exit %v", r.Exit)
	}
	var answer fetchJSON
	if err := json.Unmarshal([]byte(r.Stdout), &answer); err != nil || answer.OK || answer.Error == nil {
		t.Fatalf("a cancelled fetch's answer: %q (%v)", r.Stdout, err)
	}
	// Its slot goes to a waiting run (the ninth fetch or the task call).
	waitForEither := time.After(10 * time.Second)
	for !c.has(101) {
		select {
		case <-page.started:
			// the ninth fetch took the slot: cancel it so the task call runs
			c.send(map[string]any{"id": serveRuns + 1, "cancel": true})
		case <-c.arrived:
		case <-waitForEither:
			t.Fatalf("the waiting task call never ran")
		}
	}
	if r := c.wait(101, time.Second); r.Exit == nil || *r.Exit != 1 || !strings.Contains(r.Stderr, "sessionID") {
		t.Fatalf("task call: %+v", r)
	}
	// A cancel for a run that is over, or never was, changes nothing.
	c.send(map[string]any{"id": 1, "cancel": true})
	c.send(map[string]any{"id": 555, "cancel": true})
	for i := 2; i <= serveRuns+1; i++ {
		c.send(map[string]any{"id": i, "cancel": true})
	}
	for i := 2; i <= serveRuns+1; i++ {
		if r := c.wait(int64(i), 10*time.Second); r.Exit == nil || *r.Exit == 0 {
			t.Errorf("run %d after its cancel: exit %v", i, r.Exit)
		}
	}
	c.stdin.Close()
	if err := c.waitExit(10 * time.Second); err != nil {
		t.Fatalf("the resident slim did not end cleanly at end of input: %v; %s", err, c.stderr.String())
	}
}

// SIGTERM to the resident slim ends the runs in flight as it ends a
// process's command, answers them, and then ends the server.
func TestServeSignalEndsRunsThenServer(t *testing.T) {
	bin := buildSlim(t)
	page := newSlowPage(t)
	c := startServe(t, bin, t.TempDir(), "SLIM_STATE_DIR="+t.TempDir(), "SLIM_FETCH_ALLOW_PRIVATE=1", "SLIM_FETCH_CACHE=off")
	c.run(1, "", "fetch", "--json", page.srv.URL)
	waitFor(t, page.started, "the fetch to reach the server")
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := c.wait(1, 10*time.Second)
	if r.Exit == nil || *r.Exit == 0 {
		t.Fatalf("the fetch in flight answered exit %v", r.Exit)
	}
	waitFor(t, page.gone, "the fetch to close its connection")
	err := c.waitExit(10 * time.Second)
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the resident slim after SIGTERM: %v, want exit 1", err)
	}
}

// Only the commands behind the plugin's tools are run: any other ends the
// server (exit 2) before it does anything.
func TestServeRefusesOtherCommands(t *testing.T) {
	bin := buildSlim(t)
	for _, args := range [][]string{
		{"hooks", "install", "--opencode"},
		{"hook", "serve"},
		{"tasks", "settle", "x"},
		{"tasks", "_settle", "x"}, // the settler's real (hidden) name
		{"tasks", "--json", "status"},
		{"tasks", "lease", "break"},
		{"tasks", "message"}, // takes a lease: run as a process of its own
		{"rescue", "--apply", "p.patch"},
		{},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := t.TempDir()
			exec.Command("git", "init", "-q", dir).Run()
			c := startServe(t, bin, dir, "SLIM_STATE_DIR="+t.TempDir(), "HOME="+dir, "XDG_CONFIG_HOME="+dir)
			c.run(1, "", args...)
			c.stdin.Close()
			err := c.waitExit(10 * time.Second)
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit: %v, want 2", err)
			}
			if !strings.Contains(c.stderr.String(), "is not a command the resident slim runs") {
				t.Errorf("stderr: %s", c.stderr.String())
			}
			if c.has(1) {
				t.Errorf("the refused run was answered")
			}
			if _, err := os.Stat(filepath.Join(dir, ".opencode")); err == nil {
				t.Errorf("the refused install wrote .opencode")
			}
		})
	}
}

func TestCappedBuffer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fail   bool
		writes []string
		want   string
		over   bool
		errAt  int // index of the write that fails, -1 for none
	}{
		{"under the limit keeps everything", true, []string{"ab", "cd"}, "abcd", false, -1},
		{"exactly the limit", true, []string{"abcde"}, "abcde", false, -1},
		{"a failing buffer refuses the write past it", true, []string{"abc", "def"}, "abc", true, 1},
		{"a plain buffer keeps what fits and drops the rest", false, []string{"abc", "def", "g"}, "abcde", true, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &cappedBuffer{limit: 5, fail: tc.fail}
			for i, w := range tc.writes {
				n, err := b.Write([]byte(w))
				if (err != nil) != (i == tc.errAt) {
					t.Fatalf("write %d: err %v", i, err)
				}
				if err == nil && n != len(w) {
					t.Fatalf("write %d: n = %d", i, n)
				}
			}
			if b.buf.String() != tc.want || b.over != tc.over {
				t.Fatalf("kept %q over=%v, want %q over=%v", b.buf.String(), b.over, tc.want, tc.over)
			}
		})
	}
}

// The resident's log names a run's command, never its arguments: a fetch's
// URL, the first thing after "fetch", stays out of it.
func TestServedCommandNameKeepsArgumentsOut(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fetch", "https://example.com/secret?token=1"}, "fetch"},
		{[]string{"fetch", "--json", "-"}, "fetch"},
		{[]string{"search", "ast", "console.log($A)"}, "search ast"},
		{[]string{"search", "grep", "--root", "/x", "needle"}, "search grep"},
		{[]string{"tasks", "status"}, "tasks status"},
		{[]string{"tasks"}, "tasks"},
		{nil, ""},
	} {
		if got := commandName(tc.args); got != tc.want {
			t.Errorf("commandName(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// Served runs share the process: two commands parsed at once must not
// write to anything they share (the race detector checks it).
func TestServedRunsRunConcurrentlyInOneProcess(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644)
	t.Setenv("SLIM_STATE_DIR", t.TempDir())
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			args := []string{"slim", "search", "glob", "--root", dir, "*.txt"}
			if i%2 == 1 {
				args = []string{"slim", "tasks", "status"}
			}
			e := &env{ctx: context.Background(), served: true, log: zerolog.Nop(), stdin: strings.NewReader("{}"), stdout: &out, stderr: &errb}
			codes[i] = runCLI(e, args)
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if want := []int{0, 1}[i%2]; c != want {
			t.Errorf("run %d exited %d, want %d", i, c, want)
		}
	}
}

func TestEncodeReplyKeepsTextAndBoundsTheLine(t *testing.T) {
	zero := 0
	b, err := encodeReply(serveReply{ID: 3, Exit: &zero, Stdout: "<a href=\"x?a=1&b=2\">"})
	if err != nil || string(b) != `{"id":3,"exit":0,"stdout":"<a href=\"x?a=1&b=2\">"}`+"\n" {
		t.Fatalf("reply %q, %v", b, err)
	}
	// Control characters take six bytes each in JSON: 9 MiB of them would
	// make a 54 MiB line.
	b, err = encodeReply(serveReply{ID: 4, Exit: &zero, Stdout: strings.Repeat("\x01", 9<<20)})
	if err != nil || len(b) > maxReplyLine {
		t.Fatalf("reply of %d bytes, %v", len(b), err)
	}
	var r serveReply
	if err := json.Unmarshal(b, &r); err != nil || r.ID != 4 || r.Exit == nil || *r.Exit != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "larger than") {
		t.Fatalf("an oversized reply became %q", b)
	}
}
