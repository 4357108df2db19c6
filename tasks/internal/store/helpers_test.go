package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// The test binary doubles as the helper process for the tests that need
// several real processes: run with helperEnv set, it does one job and
// exits instead of running the tests.
const (
	helperEnv = "SLIM_TASKSTORE_TEST_HELPER"
	helperDir = "SLIM_TASKSTORE_TEST_DIR"
	helperArg = "SLIM_TASKSTORE_TEST_ARG"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := runHelper(mode, os.Getenv(helperDir), strings.Fields(os.Getenv(helperArg))); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper returns a command that runs this test binary as a helper.
func helper(t testing.TB, mode, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDir+"="+dir, helperArg+"="+strings.Join(args, " "))
	return cmd
}

// startHelper starts a helper with its stdin open and waits for its
// first line, which must be want. The helper is killed when the test
// ends, if it is still running.
func startHelper(t *testing.T, mode, dir, want string, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stderr *bytes.Buffer) {
	t.Helper()
	cmd = helper(t, mode, dir, args...)
	stdin, _ = cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr = &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	if l := readLine(t, stdout, 60*time.Second); l != want {
		t.Fatalf("helper said %q: %s", l, stderr.String())
	}
	return cmd, stdin, stderr
}

// runUntil starts w and returns once it has said want n times, one line
// each; it is then still running, for the caller to kill.
func runUntil(t *testing.T, w *exec.Cmd, want string, n int) {
	t.Helper()
	stdout, _ := w.StdoutPipe()
	var stderr bytes.Buffer
	w.Stderr = &stderr
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	for range n {
		if l, err := lines.ReadString('\n'); l != want+"\n" {
			w.Process.Kill()
			t.Fatalf("helper said %q (%v): %s", l, err, stderr.String())
		}
	}
}

// kill kills w and waits for it to end.
func kill(t *testing.T, w *exec.Cmd) {
	t.Helper()
	if err := w.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	w.Wait()
}

// runHelper is a helper process's job.
func runHelper(mode, dir string, args []string) error {
	s, err := Open(dir, Options{LockTimeout: time.Minute})
	if err != nil {
		return err
	}
	switch mode {
	case "count":
		// Add 1 to the generation sequence and to this worker's own
		// counter, n times, one transaction each.
		n, _ := strconv.Atoi(args[1])
		for range n {
			if err := s.Update(func(st *State) error {
				st.NextGeneration()
				st.AliasCounters[AliasKey("worker", args[0])]++
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	case "rewrite":
		// Rewrite every job of a large document with the next round's
		// number, forever. Each round says "writing" just before the
		// store writes, syncs and renames the new document.
		jobs, _ := strconv.Atoi(args[0])
		s.beforeWrite = func() { fmt.Println("writing") }
		for {
			if err := s.Update(func(st *State) error { writeRound(st, jobs); return nil }); err != nil {
				return err
			}
		}
	case "move":
		// Move every job across, round after round, forever (see
		// writeMoveRound). Each round says "archived" once its new
		// archive is durable and before its document is written; with
		// "pause" it then waits 3 ms there.
		jobs, _ := strconv.Atoi(args[0])
		pause := len(args) > 1 && args[1] == "pause"
		s.afterArchive = func() {
			fmt.Println("archived")
			if pause {
				time.Sleep(3 * time.Millisecond)
			}
		}
		for {
			if err := s.Update(func(st *State) error { writeMoveRound(st, jobs); return nil }); err != nil {
				return err
			}
		}
	case "killmidwrite":
		// Start a transaction's write, then die in it: the temporary
		// is on disk with half a document in it, the lock is held, and
		// the rename never happens.
		s.beforeWrite = func() {
			tmp := filepath.Join(dir, "."+DocumentName+".tmp-killed")
			os.WriteFile(tmp, []byte(`{"meta":{"version":`), 0o600)
			p, _ := os.FindProcess(os.Getpid())
			p.Kill()
			select {}
		}
		return s.Update(func(st *State) error {
			st.AliasCounters["killed"] = 1
			return nil
		})
	case "hold":
		// Hold the lock until stdin closes.
		return s.Update(func(*State) error {
			fmt.Println("locked")
			io.Copy(io.Discard, os.Stdin)
			return nil
		})
	case "lease":
		return leaseWorker(s, args[0], args[1])
	case "one", "bare":
		return holdCaller(s, mode, args[0])
	case "renamed":
		// Write a document, then say "renamed" from inside the
		// directory fsync that follows the rename, and wait there.
		s.syncDir = func(string) {
			fmt.Println("renamed")
			io.Copy(io.Discard, os.Stdin)
		}
		return s.Update(func(st *State) error {
			st.NextGeneration()
			st.AliasCounters["renamed"]++
			return nil
		})
	case "capture":
		// Capture a lease and its op as this process; with "sent", mark
		// the op sent too. Then wait to be killed.
		err := s.Update(func(st *State) error {
			self := owner.Self()
			g := st.NextGeneration()
			st.Live["ses_a"] = &Job{TaskID: "ses_a", State: JobRunning, Generation: g}
			if _, err := st.AddOp(OpRequest{ID: "op1", Kind: OpMessage, TaskID: "ses_a", Generation: g, LeaseToken: "tok", Owner: self}, time.Now()); err != nil {
				return err
			}
			if _, err := st.AcquireLease(LeaseRequest{TaskID: "ses_a", Kind: LeaseMessage, Token: "tok", Generation: g, OpID: "op1", Owner: self}, time.Now()); err != nil {
				return err
			}
			if args[0] == "sent" {
				_, err := st.MarkSent("op1", self, time.Now())
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Println("captured")
		io.Copy(io.Discard, os.Stdin)
		return nil
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// writeRound rewrites a document of n jobs so that every job carries the
// new round's number, which is also the generation sequence: a document
// that mixes two rounds is torn.
func writeRound(st *State, n int) {
	round := st.NextGeneration()
	pad := strings.Repeat("x", 2000)
	for i := range n {
		id := "ses_" + strconv.Itoa(i)
		st.Live[id] = &Job{
			TaskID: id, ParentSessionID: "ses_parent", Agent: "explorer", Alias: "exp-" + strconv.Itoa(i+1),
			State: JobCompleted, Generation: round,
			Description:   "round " + strconv.FormatInt(round, 10),
			ResultSummary: pad + strconv.FormatInt(round, 10),
		}
	}
}

// checkRound reports whether st is a whole round written by writeRound.
func checkRound(st *State, n int) error {
	if len(st.Live) != n {
		return fmt.Errorf("%d jobs, want %d", len(st.Live), n)
	}
	round := st.Meta.GenerationSeq
	want := "round " + strconv.FormatInt(round, 10)
	for id, j := range st.Live {
		if j.Description != want || j.Generation != round || !strings.HasSuffix(j.ResultSummary, strconv.FormatInt(round, 10)) {
			return fmt.Errorf("job %s is from %q, the document from round %d", id, j.Description, round)
		}
	}
	return nil
}

// leaseWorker takes the one lease on task "ses_shared" rounds times. Each
// time it checks, in a separate transaction, that the lease is still its
// own, counts the hold, and releases it.
func leaseWorker(s *Store, worker, roundsArg string) error {
	rounds, _ := strconv.Atoi(roundsArg)
	for r := range rounds {
		token, err := NewToken()
		if err != nil {
			return err
		}
		ref := LeaseRef{TaskID: "ses_shared", Token: token, Kind: LeaseMessage}
		for {
			err := s.Update(func(st *State) error {
				_, err := st.AcquireLease(LeaseRequest{TaskID: ref.TaskID, Kind: ref.Kind, Token: token}, time.Now())
				return err
			})
			if e, ok := AsError(err); ok && e.Code == CodeLeaseHeld {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			break
		}
		if err := s.Update(func(st *State) error {
			if _, err := st.ValidateLease(ref); err != nil {
				return fmt.Errorf("worker %s round %d: my lease was taken: %w", worker, r, err)
			}
			st.AliasCounters["holds"]++
			return nil
		}); err != nil {
			return err
		}
		if err := s.Update(func(st *State) error { return st.ReleaseLease(ref.TaskID, token) }); err != nil {
			return fmt.Errorf("worker %s round %d: release: %w", worker, r, err)
		}
	}
	return nil
}

// readLine reads one line from r within d.
func readLine(t *testing.T, r io.Reader, d time.Duration) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(l)
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(d):
		t.Fatalf("no line within %v", d)
		return ""
	}
}

// openT opens a store in a fresh scope directory.
func openT(t testing.TB, o Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "scope"), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// kindCode returns the kind and code of err's *Error, or "", "".
func kindCode(err error) (Kind, string) {
	if e, ok := AsError(err); ok {
		return e.Kind, e.Code
	}
	return "", ""
}

// temps lists the temporary files in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

var errStop = errors.New("stop here")
