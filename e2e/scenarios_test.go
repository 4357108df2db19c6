package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// Texts the scenarios look for in the tool results the model receives.
const (
	patchSuccess    = "Success. Updated the following files:"
	blockedPrefix   = "apply_patch blocked: "
	cannotExpress   = "apply_patch verification failed: Cannot express this patch"
	missingPath     = "Search path does not exist: "
	invalidPath     = "Search path is invalid: "
	loopMarker      = "[REPEATED TOOL CALLS - STOP]"
	readRefusal     = `Refusing to execute "read"`
	notFoundWarning = "slim not found"
	idleCopy        = "already registered for this directory"
)

func patch(text string) fp.ToolCall {
	return fp.Call("apply_patch", map[string]string{"patchText": text})
}

func update(path string, body ...string) string {
	return "*** Begin Patch\n*** Update File: " + path + "\n" + strings.Join(body, "\n") + "\n*** End Patch"
}

func readCall(path string) fp.ToolCall { return fp.Call("read", map[string]string{"filePath": path}) }

// replaceOnce returns s with the single occurrence of old replaced, and
// fails the test when old does not occur exactly once (a broken fixture).
func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if n := strings.Count(s, old); n != 1 {
		t.Fatalf("fixture: %q occurs %d times", old, n)
	}
	return strings.Replace(s, old, new, 1)
}

// wantFile compares a project file with the bytes it must hold.
func wantFile(t *testing.T, p *project, rel, want string) {
	t.Helper()
	got, err := os.ReadFile(p.path(rel))
	if err != nil {
		t.Errorf("%s: %v", rel, err)
		return
	}
	if string(got) != want {
		t.Errorf("%s:\n got  %q\n want %q", rel, got, want)
	}
}

func wantPrefix(t *testing.T, what, got, prefix string) {
	t.Helper()
	if !strings.HasPrefix(got, prefix) {
		t.Errorf("%s: want a result starting with %q, got %q", what, prefix, clip(got, 500))
	}
}

func wantAbsent(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists (err %v); the patch must have been blocked", path, err)
	}
}

// Fixtures of the stale-patch and line-ending tests, shared with the
// host-alone control in TestSlimAbsentEverythingPasses.
var (
	staleQuotes  = "\"\"\"Greeting helpers.\"\"\"\n\n\ndef greet(name):\n    banner = \u201cWelcome!\u201d\n    return banner + name\n\n\ndef farewell(name):\n    return \"Bye \" + name   \n"
	staleConfig  = "[server]\nhost = \"localhost\"   \nport = 8080\ndebug = false\n\n[client]\nretries = 3\t\n"
	stalePatches = []fp.ToolCall{
		patch(update("greet.py", "@@", " def greet(name):", `     banner = "Welcome!"`, "-    return banner + name", `+    return banner + ", " + name`)),
		patch(update("config.ini", "@@", " [server]", ` host = "localhost"`, "-port = 8080", "+port = 9090", " debug = false")),
	}
	eolCRLF    = "alpha\r\nbeta\r\ngamma\r\ndelta\r\n"
	eolNoFinal = "one\ntwo\nthree"
	eolBOM     = "\ufefffirst\nsecond\nthird\n"
	eolPatches = []fp.ToolCall{
		patch(update("crlf.txt", "@@", " alpha", "-beta", "+BETA", " gamma")),
		patch(update("bom.txt", "@@", " first", "-second", "+SECOND", " third")),
		patch(update("nofinal.txt", "@@", " one", "-two", "+TWO", " three")),
	}
)

// Stale patches: the model's context lines drifted from the
// file (straight vs curly quotes, lost trailing spaces). The host alone
// matches them loosely and then writes the model's version of the context
// line over the file's; through slim the edited lines land as authored and
// every other line keeps its bytes, the drifted context line included.
func TestStalePatchRescued(t *testing.T) {
	t.Parallel()
	quotes, config := staleQuotes, staleConfig
	p := newProject(t, withSlim, map[string]string{"greet.py": quotes, "config.ini": config, "plain.txt": "first\nsecond\n"})
	// One turn with three parallel calls, as models often send them.
	r := p.run(
		fp.Calls(
			patch(update("plain.txt", "@@", " first", "-second", "+second, edited", "+third")),
			stalePatches[0],
			stalePatches[1],
		),
		fp.Text("done"),
	)
	t.Run("plain patch passes", func(t *testing.T) {
		wantPrefix(t, "plain.txt result", r.result(t, 0, 0), patchSuccess)
		wantFile(t, p, "plain.txt", "first\nsecond, edited\nthird\n")
	})
	t.Run("curly quotes on a context line", func(t *testing.T) {
		wantPrefix(t, "greet.py result", r.result(t, 0, 1), patchSuccess)
		wantFile(t, p, "greet.py", replaceOnce(t, quotes, "    return banner + name\n", "    return banner + \", \" + name\n"))
	})
	t.Run("trailing spaces on a context line", func(t *testing.T) {
		wantPrefix(t, "config.ini result", r.result(t, 0, 2), patchSuccess)
		wantFile(t, p, "config.ini", replaceOnce(t, config, "port = 8080\n", "port = 9090\n"))
	})
}

// Line endings, final newline and BOM: the pinned host splits on LF, keeps
// a CR inside a line, always ends the file with LF and keeps a UTF-8 BOM.
// slim must hand on only patches whose result on that host is the intended
// text (so a CRLF file's rendered lines carry their CR), and refuse the one
// it cannot express (an edit of a file without a final newline, which the
// host would end with one).
func TestPatchLineEndsAndBOM(t *testing.T) {
	t.Parallel()
	noFinal := eolNoFinal
	p := newProject(t, withSlim, map[string]string{"crlf.txt": eolCRLF, "nofinal.txt": eolNoFinal, "bom.txt": eolBOM})
	r := p.run(fp.Calls(eolPatches...), fp.Text("done"))
	t.Run("CRLF file keeps CRLF", func(t *testing.T) {
		wantPrefix(t, "crlf.txt result", r.result(t, 0, 0), patchSuccess)
		wantFile(t, p, "crlf.txt", "alpha\r\nBETA\r\ngamma\r\ndelta\r\n")
	})
	t.Run("BOM file keeps its BOM", func(t *testing.T) {
		wantPrefix(t, "bom.txt result", r.result(t, 0, 1), patchSuccess)
		wantFile(t, p, "bom.txt", "\ufefffirst\nSECOND\nthird\n")
	})
	t.Run("no final newline cannot be kept by the host, so slim refuses", func(t *testing.T) {
		wantPrefix(t, "nofinal.txt result", r.result(t, 0, 2), cannotExpress)
		wantFile(t, p, "nofinal.txt", noFinal)
	})
}

// Outside paths: with every host permission allowed, only slim
// stands between the model and a file outside the project.
func TestOutsidePatchBlocked(t *testing.T) {
	t.Parallel()
	p := newProject(t, withSlim, map[string]string{"inside.txt": "inside\n"})
	victim := filepath.Join(p.outside, "victim.txt")
	mustWrite(t, victim, "do not touch\n")
	r := p.run(
		fp.Calls(
			patch("*** Begin Patch\n*** Add File: ../outside/escape.txt\n+escaped\n*** End Patch"),
			patch(update(victim, "@@", "-do not touch", "+touched")),
			patch("*** Begin Patch\n*** Add File: new-inside.txt\n+fine\n*** Update File: inside.txt\n@@\n-inside\n+changed\n*** Add File: ../outside/escape2.txt\n+escaped\n*** End Patch"),
		),
		fp.Text("done"),
	)
	t.Run("relative escape", func(t *testing.T) {
		wantPrefix(t, "relative Add File result", r.result(t, 0, 0), blockedPrefix)
		wantAbsent(t, filepath.Join(p.outside, "escape.txt"))
	})
	t.Run("absolute outside path", func(t *testing.T) {
		wantPrefix(t, "absolute Update File result", r.result(t, 0, 1), blockedPrefix)
		if b, err := os.ReadFile(victim); err != nil || string(b) != "do not touch\n" {
			t.Errorf("outside file changed: %q, %v", b, err)
		}
	})
	t.Run("one outside target blocks the whole patch", func(t *testing.T) {
		wantPrefix(t, "mixed patch result", r.result(t, 0, 2), blockedPrefix)
		wantAbsent(t, filepath.Join(p.outside, "escape2.txt"))
		wantAbsent(t, p.path("new-inside.txt"))
		wantFile(t, p, "inside.txt", "inside\n")
	})
}

// Repeated identical calls: the 4th identical read result carries the
// notice, the 6th call is refused, and so is every later identical one
// until a different call completes. The same holds when
// the plugin is installed twice (project and global): the host loads both
// copies, and a second copy that also counted would reset every run.
func TestRepeatedReadsStopped(t *testing.T) {
	t.Parallel()
	for _, mode := range []pluginMode{withSlim, slimTwice} {
		t.Run(strings.ReplaceAll(mode.String(), " ", "_"), func(t *testing.T) {
			t.Parallel()
			repeatedReads(t, mode)
		})
	}
}

func repeatedReads(t *testing.T, mode pluginMode) {
	p := newProject(t, mode, map[string]string{"notes.txt": "remember the milk\n", "other.txt": "other\n"})
	if mode == slimTwice {
		// One process per hook call here, so the real host runs both of
		// the plugin's ways to reach slim.
		p.env = append(p.env, "SLIM_SERVE=0")
	}
	same := readCall(p.path("notes.txt"))
	r := p.run(
		fp.Calls(same), fp.Calls(same), fp.Calls(same), fp.Calls(same),
		fp.Calls(same), fp.Calls(same), fp.Calls(same),
		fp.Calls(readCall(p.path("other.txt"))),
		fp.Text("done"),
	)
	first := r.result(t, 0, 0)
	if !strings.Contains(first, "remember the milk") || strings.Contains(first, loopMarker) {
		t.Errorf("1st read: want the file text and no notice, got %q", clip(first, 400))
	}
	fourth := r.result(t, 3, 0)
	if !strings.Contains(fourth, "remember the milk") || !strings.Contains(fourth, loopMarker) {
		t.Errorf("4th read: want the file text and the notice %q, got %q", loopMarker, clip(fourth, 800))
	}
	wantPrefix(t, "6th identical read", r.result(t, 5, 0), readRefusal)
	wantPrefix(t, "7th identical read", r.result(t, 6, 0), readRefusal)
	if other := r.result(t, 7, 0); !strings.Contains(other, "other") || strings.HasPrefix(other, "Refusing") {
		t.Errorf("a different read must pass, got %q", clip(other, 400))
	}
	// The resident slim answered the hooks of the run (one, started once),
	// or, with SLIM_SERVE=0, none ran.
	want := map[pluginMode]int{withSlim: 1, slimTwice: 0}[mode]
	if got := strings.Count(p.slimLog(), `"message":"hook serve: started"`); got != want {
		t.Errorf("slim hook serve started %d times, want %d", got, want)
	}
	if mode == slimTwice && !strings.Contains(p.pluginLog(), idleCopy) {
		t.Errorf("no plugin copy reported %q: did the host load both copies?\n%s", idleCopy, p.pluginLog())
	}
}

// Search path pre-check: grep and glob on a path that does not
// exist are stopped with a clear error before the host's ripgrep runs; a
// search on a real path still runs.
func TestSearchMissingPath(t *testing.T) {
	t.Parallel()
	p := newProject(t, withSlim, map[string]string{"notes.txt": "needle here\n", "src/main.go": "package main\n"})
	r := p.run(
		fp.Calls(
			fp.Call("grep", map[string]string{"pattern": "needle", "path": p.path("no-such-dir")}),
			fp.Call("glob", map[string]string{"pattern": "*.go", "path": p.path("missing/src")}),
			fp.Call("grep", map[string]string{"pattern": "needle", "path": p.path("notes.txt/sub")}),
			fp.Call("grep", map[string]string{"pattern": "needle", "path": p.dir}),
		),
		fp.Text("done"),
	)
	wantPrefix(t, "grep on a missing dir", r.result(t, 0, 0), missingPath)
	wantPrefix(t, "glob on a missing dir", r.result(t, 0, 1), missingPath)
	wantPrefix(t, "grep below a file", r.result(t, 0, 2), invalidPath)
	if got := r.result(t, 0, 3); !strings.Contains(got, "needle here") {
		t.Errorf("grep on the project must run and find the needle, got %q", clip(got, 400))
	}
}

// Without slim every call reaches the host unchanged: with no
// plugin at all, and with the plugin installed but no slim binary to run.
// The calls slim stops elsewhere here go through: the patch writes outside
// the project, the host reports the missing search path itself, and six
// identical reads (sent in one turn) all return the file.
//
// The same runs are the control for the stale-patch and line-ending tests:
// the stale, CRLF, no-final-newline and BOM patches come out other than
// those tests demand, so they pass only because slim acted (and a host
// release that changes this behaviour shows up here first).
func TestSlimAbsentEverythingPasses(t *testing.T) {
	t.Parallel()
	for _, mode := range []pluginMode{noPlugin, slimMissing} {
		t.Run(strings.ReplaceAll(mode.String(), " ", "_"), func(t *testing.T) {
			t.Parallel()
			p := newProject(t, mode, map[string]string{
				"plain.txt": "first\nsecond\n", "notes.txt": "remember the milk\n",
				"greet.py": staleQuotes, "config.ini": staleConfig,
				"crlf.txt": eolCRLF, "nofinal.txt": eolNoFinal, "bom.txt": eolBOM,
			})
			same := readCall(p.path("notes.txt"))
			first := []fp.ToolCall{
				patch(update("plain.txt", "@@", " first", "-second", "+second, edited")),
				patch("*** Begin Patch\n*** Add File: ../outside/escape.txt\n+escaped\n*** End Patch"),
				fp.Call("grep", map[string]string{"pattern": "milk", "path": p.path("no-such-dir")}),
				fp.Call("grep", map[string]string{"pattern": "milk", "path": p.dir}),
			}
			control := len(first)
			first = append(append(first, stalePatches...), eolPatches...)
			r := p.run(fp.Calls(first...), fp.Calls(same, same, same, same, same, same), fp.Text("done"))

			wantPrefix(t, "plain patch", r.result(t, 0, 0), patchSuccess)
			wantFile(t, p, "plain.txt", "first\nsecond, edited\n")

			wantPrefix(t, "outside patch", r.result(t, 0, 1), patchSuccess)
			if b, err := os.ReadFile(filepath.Join(p.outside, "escape.txt")); err != nil || string(b) != "escaped\n" {
				t.Errorf("without slim the host writes outside the project: got %q, %v", b, err)
			}

			if got := r.result(t, 0, 2); strings.HasPrefix(got, missingPath) || strings.HasPrefix(got, invalidPath) {
				t.Errorf("missing search path: the host's own answer was expected, got slim's %q", clip(got, 300))
			}
			if got := r.result(t, 0, 3); !strings.Contains(got, "remember the milk") {
				t.Errorf("grep on the project: want the match, got %q", clip(got, 300))
			}
			for i := 0; i < 6; i++ {
				got := r.result(t, 1, i)
				if !strings.Contains(got, "remember the milk") || strings.Contains(got, loopMarker) || strings.HasPrefix(got, "Refusing") {
					t.Errorf("identical read %d: want plain file text, got %q", i+1, clip(got, 300))
				}
			}
			if mode == slimMissing && !strings.Contains(p.pluginLog(), notFoundWarning) {
				t.Errorf("the installed plugin did not report %q (did it load?); plugin log:\n%s", notFoundWarning, p.pluginLog())
			}

			for i := control; i < len(first); i++ {
				wantPrefix(t, "host-alone patch", r.result(t, 0, i), patchSuccess)
			}
			// The loosely matched context line is written as the model spelled it.
			quotes := replaceOnce(t, staleQuotes, "    banner = \u201cWelcome!\u201d\n", "    banner = \"Welcome!\"\n")
			wantFile(t, p, "greet.py", replaceOnce(t, quotes, "    return banner + name\n", "    return banner + \", \" + name\n"))
			config := replaceOnce(t, staleConfig, "host = \"localhost\"   \n", "host = \"localhost\"\n")
			wantFile(t, p, "config.ini", replaceOnce(t, config, "port = 8080\n", "port = 9090\n"))
			// Lines of the hunk lose their CR; the line after it keeps it.
			wantFile(t, p, "crlf.txt", "alpha\nBETA\ngamma\ndelta\r\n")
			// A final newline appears.
			wantFile(t, p, "nofinal.txt", "one\nTWO\nthree\n")
			// The BOM survives on the host alone too.
			wantFile(t, p, "bom.txt", "\ufefffirst\nSECOND\nthird\n")
		})
	}
}
