package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// Apply mode in the real host: `slim hooks install --opencode --apply`
// makes the plugin's apply_patch replace the host's, and slim writes the
// patch itself. These scenarios check what the issue promises from the
// host's side: every file or none, bytes kept where the host's own tool
// cannot keep them, the host's edit permission obeyed, an abort rolled
// back, and the host's formatter setting followed.

// applyProject is a project with the plugin in apply mode.
func applyProject(t *testing.T, files map[string]string) *project {
	t.Helper()
	p := newProject(t, withSlim, files)
	p.installPlugin("--apply")
	if _, err := os.Stat(p.path(".opencode/plugin/slim.json")); err != nil {
		t.Fatalf("slim hooks install --opencode --apply wrote no settings: %v", err)
	}
	return p
}

// offeredDescription is the description of tool in the first scripted
// request the host sent, or "" when it did not offer the tool.
func offeredDescription(t *testing.T, r *hostRun, tool string) string {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.provider.ScriptedRequests()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, tl := range body.Tools {
		if tl.Function.Name == tool {
			return tl.Function.Description
		}
	}
	return ""
}

// The host's own tool writes file by file and cannot write some texts at
// all; in apply mode a patch whose second file fails changes nothing, and
// a CRLF file, a BOM file and a file without a final newline come out
// byte for byte.
func TestApplyModeAllOrNothingAndByteExact(t *testing.T) {
	t.Parallel()
	p := applyProject(t, map[string]string{"crlf.txt": eolCRLF, "nofinal.txt": eolNoFinal, "bom.txt": eolBOM, "first.txt": "one\n"})
	r := p.run(
		fp.Calls(patch("*** Begin Patch\n*** Update File: first.txt\n@@\n-one\n+ONE\n*** Update File: bom.txt\n@@\n-no such line\n+x\n*** End Patch")),
		fp.Calls(patch("*** Begin Patch\n"+
			"*** Update File: crlf.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n"+
			"*** Update File: bom.txt\n@@\n first\n-second\n+SECOND\n"+
			"*** Update File: nofinal.txt\n@@\n two\n-three\n+THREE\n"+
			"*** End Patch")),
		fp.Text("done"),
	)
	t.Run("the host offers the replacement under its own description", func(t *testing.T) {
		if d := offeredDescription(t, r, "apply_patch"); !strings.HasPrefix(d, "Use the `apply_patch` tool to edit files.") {
			t.Errorf("apply_patch description: %q", clip(d, 300))
		}
	})
	t.Run("a failing second file leaves both untouched", func(t *testing.T) {
		wantPrefix(t, "failed patch", r.result(t, 0, 0), "apply_patch verification failed: ")
		if got := r.result(t, 0, 0); !strings.Contains(got, "bom.txt") {
			t.Errorf("the refusal does not name the file: %q", clip(got, 400))
		}
		wantFile(t, p, "first.txt", "one\n")
	})
	t.Run("CRLF, BOM and no final newline are written exactly", func(t *testing.T) {
		if got, want := r.result(t, 1, 0), "Success. Updated the following files:\nM crlf.txt\nM bom.txt\nM nofinal.txt"; got != want {
			t.Errorf("result: %q, want %q", got, want)
		}
		wantFile(t, p, "crlf.txt", "alpha\r\nBETA\r\ngamma\r\ndelta\r\n")
		wantFile(t, p, "bom.txt", "\ufefffirst\nSECOND\nthird\n")
		wantFile(t, p, "nofinal.txt", "one\ntwo\nTHREE")
	})
}

// The host's edit permission still governs apply_patch: deny hides the
// tool, and ask under `opencode run` (which cannot ask anyone) refuses
// the call before anything is written.
func TestApplyModeEditPermission(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{"ask", "deny"} {
		t.Run(rule, func(t *testing.T) {
			t.Parallel()
			p := applyProject(t, map[string]string{"a.txt": "one\n"})
			p.permission = map[string]any{"*": "allow", "edit": rule}
			r := p.run(fp.Calls(patch(update("a.txt", "@@", "-one", "+two"))), fp.Text("done"))
			wantRuleObeyed(t, r, "apply_patch", rule)
			wantFile(t, p, "a.txt", "one\n")
		})
	}
}

// The host's abort of a running apply_patch reaches slim as SIGTERM, and
// slim puts back what it had written: here it has written the first of
// three files and waits (SLIM_APPLY_PAUSE_MS) before the second when the
// session is aborted through the host's API.
func TestApplyModeAbortRollsBack(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"}
	p := applyProject(t, files)
	p.env = append(p.env, "SLIM_APPLY_PAUSE_MS=60000")
	s := p.serve([]fp.Turn{
		fp.Calls(patch("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n*** Update File: c.txt\n@@\n-c\n+C\n*** End Patch")),
		fp.Text("done"),
	}, fp.Options{})
	id := s.session()
	s.api(t, http.MethodPost, "/session/"+id+"/prompt_async", map[string]any{"parts": []any{map[string]any{"type": "text", "text": "do it"}}}, nil, 30*time.Second)
	deadline := time.Now().Add(90 * time.Second)
	for {
		if b, _ := os.ReadFile(p.path("a.txt")); string(b) == "A\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slim never wrote the first file\n%s", tail(p.pluginLog(), 20))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var ok bool
	s.api(t, http.MethodPost, "/session/"+id+"/abort", nil, &ok, 30*time.Second)
	// The plugin waits for slim to finish its rollback before it answers
	// the host; the files are back once the session is idle.
	for {
		var status map[string]any
		s.api(t, http.MethodGet, "/session/status", nil, &status, 30*time.Second)
		if _, busy := status[id]; !busy {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session is still busy after the abort")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitFor := time.Now().Add(15 * time.Second)
	for {
		a, _ := os.ReadFile(p.path("a.txt"))
		if string(a) == "a\n" || time.Now().After(waitFor) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for name, want := range files {
		wantFile(t, p, name, want)
	}
	if log := p.pluginLog(); strings.Contains(log, `"level":"error"`) {
		t.Errorf("the plugin logged an error: %s", tail(log, 10))
	}
}

// slim runs what the host would have run after its own write: with the
// host's formatters on, a Go file is gofmt-ed after the patch, and the
// model is told; with them off (the default here), it is not.
func TestApplyModeFormatters(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("gofmt"); err != nil {
		unavailable(t, "gofmt is not on PATH: %v", err)
	}
	const src = "package main\nfunc main(){\nprintln(\"a\")\n}\n"
	edit := patch(update("main.go", "@@", "-println(\"a\")", "+println(\"b\")"))
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "formatters on", false: "formatters off"}[on]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := applyProject(t, map[string]string{"main.go": src})
			if on {
				p.formatter = true
			}
			r := p.run(fp.Calls(edit), fp.Text("done"))
			got := r.result(t, 0, 0)
			wantPrefix(t, "result", got, "Success. Updated the following files:\nM main.go")
			if on {
				wantFile(t, p, "main.go", "package main\n\nfunc main() {\n\tprintln(\"b\")\n}\n")
				if !strings.Contains(got, "\nFormatted main.go with gofmt; read it again before the next patch.") {
					t.Errorf("the model was not told of the formatter: %q", got)
				}
			} else {
				wantFile(t, p, "main.go", "package main\nfunc main(){\nprintln(\"b\")\n}\n")
				if strings.Contains(got, "Formatted") {
					t.Errorf("formatters off, but the result says: %q", got)
				}
			}
		})
	}
}
