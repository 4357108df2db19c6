package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/testbin"
)

// buildSlim returns the real binary, built the way it ships (static, no
// docs) once per test process by testbin.Shared; TestMain removes it. With
// -short the tests that need it are skipped.
func buildSlim(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	return testbin.Shared(t)
}

func hookCmd(bin, state, phase string, req any) *exec.Cmd {
	data, _ := json.Marshal(req)
	cmd := exec.Command(bin, "hook", phase)
	cmd.Env = append(os.Environ(), "SLIM_STATE_DIR="+state)
	cmd.Stdin = bytes.NewReader(data)
	return cmd
}

func runHookBin(t *testing.T, bin, state, phase string, req any) protocol.Response {
	out, err := hookCmd(bin, state, phase, req).Output()
	if err != nil {
		t.Errorf("slim hook %s: %v", phase, err)
		return protocol.Response{}
	}
	r, err := decodeResponse(out)
	if err != nil {
		t.Errorf("slim hook %s: %v", phase, err)
		return protocol.Response{}
	}
	return *r
}

// decodeResponse reads a hook response strictly and checks it:
// one object with known fields only, numbers as written, this protocol
// version and one of the four actions.
func decodeResponse(data []byte) (*protocol.Response, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var r protocol.Response
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("hook response: %w", err)
	}
	if r.V != protocol.Version {
		return nil, fmt.Errorf("hook response: v%d, want v%d", r.V, protocol.Version)
	}
	switch r.Action {
	case protocol.Pass, protocol.Mutate, protocol.Block, protocol.Append:
	default:
		return nil, fmt.Errorf("hook response: unknown action %q", r.Action)
	}
	return &r, nil
}

// Every phase a separate process, parallel calls on one session: befores
// write nothing, so they cannot inflate the run; no after's count is lost;
// and the next identical read is refused by a before that reads the count
// the afters wrote.
func TestParallelProcessesLoseNoCount(t *testing.T) {
	bin := buildSlim(t)
	state := t.TempDir()
	const n = 12
	args := map[string]any{"filePath": "src/a.go"}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runHookBin(t, bin, state, "before", map[string]any{"v": 1, "tool": "read", "sessionID": "par", "callID": fmt.Sprint("c", i), "args": args})
			if r.Action != protocol.Pass {
				t.Errorf("before %d: %+v", i, r)
			}
		}()
	}
	wg.Wait()
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Fatalf("%d parallel befores wrote %v", n, ents)
	}
	var mu sync.Mutex
	appends := 0
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := runHookBin(t, bin, state, "after", map[string]any{"v": 1, "tool": "read", "sessionID": "par", "callID": fmt.Sprint("c", i), "args": args, "output": "same"})
			if r.Action == protocol.Append {
				mu.Lock()
				appends++
				mu.Unlock()
			}
		}()
		// Befores of further identical calls while the afters are written:
		// each reads a whole record and never blocks on the lock.
		go func() {
			defer wg.Done()
			runHookBin(t, bin, state, "before", map[string]any{"v": 1, "tool": "read", "sessionID": "par", "callID": fmt.Sprint("d", i), "args": args})
		}()
	}
	wg.Wait()
	store := loopguard.NewStore(state, loopguard.StoreOptions{})
	if st := store.Load("par"); st.Last.Runs != n {
		t.Fatalf("runs %d after %d parallel afters; want %d", st.Last.Runs, n, n)
	}
	if appends != n-2 {
		t.Fatalf("%d notices, want %d (from the 3rd result on)", appends, n-2)
	}
	r := runHookBin(t, bin, state, "before", map[string]any{"v": 1, "tool": "read", "sessionID": "par", "callID": "next", "args": args})
	if r.Action != protocol.Block {
		t.Fatalf("the next identical read was not refused: %+v", r)
	}
}

// A process killed at any moment leaves state files that still read.
func TestKilledWritersLeaveReadableState(t *testing.T) {
	bin := buildSlim(t)
	state := t.TempDir()
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	const rounds = 100
	// Calibrate: kill moments spread evenly over a whole run, start to
	// finish (the median of 5 warm runs).
	var runs []time.Duration
	for i := 0; i < 5; i++ {
		t0 := time.Now()
		runHookBin(t, bin, state, "after", map[string]any{"v": 1, "tool": "read", "sessionID": "kill0", "output": "warm"})
		runs = append(runs, time.Since(t0))
	}
	slices.Sort(runs)
	span := runs[2]
	killed := 0
	for i := 0; i < rounds; i++ {
		sid := fmt.Sprint("kill", i%7)
		phase, req := "before", map[string]any{"v": 1, "tool": "read", "sessionID": sid, "callID": fmt.Sprint("c", i), "args": map[string]any{"filePath": strings.Repeat("x", i)}}
		if i%2 == 1 {
			phase, req = "after", map[string]any{"v": 1, "tool": "read", "sessionID": sid, "callID": fmt.Sprint("c", i-1), "args": map[string]any{"filePath": strings.Repeat("x", i-1)}, "output": strings.Repeat("y", 1000*i)}
		}
		cmd := hookCmd(bin, state, phase, req)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(span))))
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		}
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(state, "loop", "v1"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var st loopguard.State
		if err := json.Unmarshal(data, &st); err != nil || st.Version != 1 || !strings.HasPrefix(st.Session, "kill") {
			t.Errorf("%s does not read after a kill: %v\n%q", p, err, data)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	t.Logf("%d of %d processes killed mid-run (span %v); %d state files, all readable", killed, rounds, span, files)
	// The guard still works on every session afterwards.
	for s := 0; s < 7; s++ {
		r := runHookBin(t, bin, state, "before", map[string]any{"v": 1, "tool": "read", "sessionID": fmt.Sprint("kill", s), "callID": "z", "args": map[string]any{}})
		if r.Action != protocol.Pass {
			t.Errorf("session %d after kills: %+v", s, r)
		}
	}
}

// runHookRaw runs `slim hook before` on the raw request with extra
// environment and returns stdout and the exit code.
func runHookRaw(t *testing.T, bin, state string, req []byte, env ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(bin, "hook", "before")
	cmd.Env = append(append(os.Environ(), "SLIM_STATE_DIR="+state), env...)
	cmd.Stdin = bytes.NewReader(req)
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out, code
}

// A request over the size limit: an apply_patch is blocked with a reason
// (exit 0), so the plugin's answer does not depend on how it treats a
// failure; any other tool is a bad request (exit 2) and fails open.
func TestHookOversizeRequest(t *testing.T) {
	bin := buildSlim(t)
	state := t.TempDir()
	pad := strings.Repeat("a", protocol.MaxRequestBytes)
	for _, c := range []struct {
		tool string
		code int
	}{{"apply_patch", 0}, {"read", 2}} {
		req := fmt.Appendf(nil, `{"v":1,"phase":"before","host":{"directory":%q},"tool":%q,"sessionID":"s","callID":"c","args":{"patchText":"%s"}}`, state, c.tool, pad)
		out, code := runHookRaw(t, bin, state, req)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d: %s", c.tool, code, c.code, out)
		}
		if c.code != 0 {
			if !strings.Contains(string(out), `larger than 67108864 bytes`) {
				t.Errorf("%s: %s", c.tool, out)
			}
			continue
		}
		r, err := decodeResponse(out)
		if err != nil {
			t.Fatal(err)
		}
		if r.Action != protocol.Block || !strings.HasPrefix(r.Message, "apply_patch blocked: the request is larger than 64 MiB") {
			t.Fatalf("%+v", r)
		}
	}
}

// The apply_patch budget follows the plugin's timeout: with a 1 ms timeout a
// patch that takes longer to check is blocked with the budget's reason.
func TestHookBudgetFollowsThePluginTimeout(t *testing.T) {
	bin := buildSlim(t)
	root := t.TempDir()
	var patch strings.Builder
	patch.WriteString("*** Begin Patch\n")
	for f := 0; f < 20; f++ {
		var file strings.Builder
		for i := 0; i < 2000; i++ {
			fmt.Fprintf(&file, "line %d of file %d\n", i, f)
		}
		name := fmt.Sprintf("f%d.txt", f)
		os.WriteFile(filepath.Join(root, name), []byte(file.String()), 0o644)
		fmt.Fprintf(&patch, "*** Update File: %s\n", name)
		for i := 10; i < 2000; i += 100 {
			fmt.Fprintf(&patch, "@@\n line %d of file %d  \n-line %d of file %d\n+changed %d\n", i-1, f, i, f, i)
		}
	}
	patch.WriteString("*** End Patch")
	req, _ := json.Marshal(map[string]any{"v": 1, "host": map[string]string{"platform": "linux", "directory": root, "worktree": root, "cwd": root},
		"tool": "apply_patch", "sessionID": "s", "callID": "c", "args": map[string]any{"patchText": patch.String()}})
	for _, c := range []struct {
		timeout string
		action  protocol.Action
	}{{"1", protocol.Block}, {"60000", protocol.Mutate}} {
		out, code := runHookRaw(t, bin, t.TempDir(), req, "SLIM_HOOK_TIMEOUT_MS="+c.timeout)
		r, err := decodeResponse(out)
		if code != 0 || err != nil {
			t.Fatalf("timeout %s: exit %d, %v: %s", c.timeout, code, err, out)
		}
		if r.Action != c.action {
			t.Fatalf("timeout %s: %s %.300q", c.timeout, r.Action, r.Message)
		}
		if c.action == protocol.Block && !strings.HasPrefix(r.Message, "apply_patch blocked: slim could not finish checking this patch within its time budget") {
			t.Errorf("message %q", r.Message)
		}
	}
}

func TestPatchBudgetIsThreeFifthsOfThePluginTimeout(t *testing.T) {
	for v, want := range map[string]time.Duration{
		"":        3 * time.Second,
		"5000":    3 * time.Second,
		"1000":    600 * time.Millisecond,
		"20000":   12 * time.Second,
		" +2000x": 1200 * time.Millisecond, // read as the plugin's parseInt reads it
		"abc":     3 * time.Second,
		"0":       3 * time.Second,
		"-5":      3 * time.Second,
	} {
		e := &env{cfg: readSettings(func(k string) string { return map[string]string{"SLIM_HOOK_TIMEOUT_MS": v}[k] })}
		if got := patchBudget(e); got != want {
			t.Errorf("SLIM_HOOK_TIMEOUT_MS=%q: budget %v, want %v", v, got, want)
		}
	}
}
