package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
	"github.com/slimgate/slim/search/astgrep/astgreptest"
)

// Texts the ast-grep scenarios look for.
const (
	astDryRun  = "[dry run] "
	astApplied = "[applied] "
	astBlocked = "ast_grep_replace blocked: "
)

// astProject is a project with the slim plugin and the given files, in which
// the real ast-grep is reachable only as node_modules/.bin/ast-grep: the
// host's PATH has none, so the plugin must hand slim that directory.
func astProject(t *testing.T, files map[string]string) *project {
	t.Helper()
	p := newProject(t, withSlim, files)
	bin := astgreptest.Binary(t)
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	mustMkdir(t, p.path("node_modules/.bin"))
	if err := os.Symlink(abs, p.path("node_modules/.bin/ast-grep")); err != nil {
		t.Fatal(err)
	}
	return p
}

func astSearch(pattern, lang string, extra map[string]any) fp.ToolCall {
	args := map[string]any{"pattern": pattern, "lang": lang}
	for k, v := range extra {
		args[k] = v
	}
	return fp.Call("ast_grep_search", args)
}

func astReplace(pattern, rewrite, lang string, extra map[string]any) fp.ToolCall {
	args := map[string]any{"pattern": pattern, "rewrite": rewrite, "lang": lang}
	for k, v := range extra {
		args[k] = v
	}
	return fp.Call("ast_grep_replace", args)
}

const astGoSrc = "package lib\n\nfunc f() error {\n\terr := g()\n\tif err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n"

// The two tools the plugin registers, in a real host: the model is offered
// both with schemas that require only the pattern, language and rewrite;
// the search runs in the project; the replace is a dry run until dryRun is
// false, then writes every file (a CRLF file keeps CRLF), and it refuses a
// path outside the project, which stays untouched although every host
// permission is allowed.
func TestAstGrepTools(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"src/app.py":  "def main():\n    print(\"hello\")\n",
		"src/util.py": "print(1)\n",
		"win.py":      "def f(x):\r\n    print(x)\r\n",
		"lib/lib.go":  astGoSrc,
	}
	p := astProject(t, files)
	victim := filepath.Join(p.outside, "o.py")
	mustWrite(t, victim, "print(\"outside\")\n")
	r := p.run(
		fp.Calls(
			astSearch("print($A)", "python", nil),
			astSearch("if err != nil { return $E }", "go", map[string]any{"paths": []string{"lib"}}),
			astReplace("print($A)", "log($A)", "python", map[string]any{"paths": []string{"src"}}),
		),
		fp.Calls(
			astReplace("print($A)", "log($A)", "python", map[string]any{"paths": []string{"src", "win.py"}, "dryRun": false}),
			astReplace("print($A)", "log($A)", "python", map[string]any{"paths": []string{"../outside"}, "dryRun": false}),
		),
		fp.Text("done"),
	)
	t.Run("both tools are offered with their schemas", func(t *testing.T) {
		req := r.provider.ScriptedRequests()[0]
		for _, name := range []string{"ast_grep_search", "ast_grep_replace"} {
			if !contains(req.Tools, name) {
				t.Fatalf("the host did not offer %s: %v", name, req.Tools)
			}
		}
		var body struct {
			Tools []struct {
				Function struct {
					Name       string `json:"name"`
					Parameters struct {
						Required   []string       `json:"required"`
						Properties map[string]any `json:"properties"`
					} `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"ast_grep_search": "pattern,lang", "ast_grep_replace": "pattern,rewrite,lang"}
		for _, tool := range body.Tools {
			if w, ok := want[tool.Function.Name]; ok {
				if got := strings.Join(tool.Function.Parameters.Required, ","); got != w {
					t.Errorf("%s requires %s, want %s", tool.Function.Name, got, w)
				}
				if _, ok := tool.Function.Parameters.Properties["globs"]; !ok {
					t.Errorf("%s has no globs argument", tool.Function.Name)
				}
			}
		}
	})
	t.Run("search", func(t *testing.T) {
		got := r.result(t, 0, 0)
		wantPrefix(t, "python search", got, "Found 3 matches in 3 files\n")
		if !strings.Contains(got, "\nsrc/app.py\n  2: print(\"hello\")\n") {
			t.Errorf("python search: %q", clip(got, 600))
		}
		wantPrefix(t, "go search", r.result(t, 0, 1), "Found 1 match in 1 file\n\nlib/lib.go\n  5: if err != nil {")
	})
	t.Run("replace is a dry run by default", func(t *testing.T) {
		got := r.result(t, 0, 2)
		wantPrefix(t, "dry run", got, astDryRun+"2 replacements in 2 files\n")
		if !strings.Contains(got, "Nothing was written.") {
			t.Errorf("dry run: %q", clip(got, 600))
		}
	})
	t.Run("replace with dryRun false writes every file, CRLF kept", func(t *testing.T) {
		wantPrefix(t, "apply", r.result(t, 1, 0), astApplied+"3 replacements in 3 files\n")
		wantFile(t, p, "src/app.py", "def main():\n    log(\"hello\")\n")
		wantFile(t, p, "src/util.py", "log(1)\n")
		wantFile(t, p, "win.py", "def f(x):\r\n    log(x)\r\n")
		wantFile(t, p, "lib/lib.go", astGoSrc)
	})
	t.Run("replace outside the project is blocked", func(t *testing.T) {
		wantPrefix(t, "outside", r.result(t, 1, 1), astBlocked)
		if b, err := os.ReadFile(victim); err != nil || string(b) != "print(\"outside\")\n" {
			t.Errorf("the outside file changed: %q %v", b, err)
		}
	})
	t.Run("the resident slim ran the searches and replaces", func(t *testing.T) {
		if got := p.servedRuns("search ast"); got[0] == 0 {
			t.Errorf("served search ast runs by exit code: %v, want some with exit 0", got)
		}
		if got := p.servedRuns("search replace"); got[0] == 0 || got[5] == 0 {
			t.Errorf("served search replace runs by exit code: %v, want some with exit 0 and the outside one with 5", got)
		}
	})
}

// The host's edit permission governs the replace: with edit denied the
// write is refused (the dry run still shows the changes) and nothing
// changes.
func TestAstGrepReplaceAsksEditPermission(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a.py": "print(1)\n"}
	p := astProject(t, files)
	p.permission = map[string]any{"*": "allow", "edit": "deny"}
	r := p.run(
		fp.Calls(astReplace("print($A)", "log($A)", "python", nil)),
		fp.Calls(astReplace("print($A)", "log($A)", "python", map[string]any{"dryRun": false})),
		fp.Text("done"),
	)
	wantPrefix(t, "dry run under edit deny", r.result(t, 0, 0), astDryRun+"1 replacement in 1 file\n")
	// The host's own refusal of ctx.ask, as its edit tools get it.
	wantPrefix(t, "apply under edit deny", r.result(t, 1, 0), "The user has specified a rule which prevents you from using this specific tool call.")
	wantFile(t, p, "a.py", "print(1)\n")
}

// astReadOnlyDenied is the plugin's refusal of ast_grep_replace for the
// host's plan agent, word for word.
const astReadOnlyDenied = `ast_grep_replace is denied for the read-only agent "plan": it may search (ast_grep_search) but not change files.`

// The host's plan agent may search but not replace, whatever the host's
// permission rules. The host offers both tools to plan (its own rules
// deny the edit permission, not plugin tools), so the plugin refuses the
// replace itself, before slim runs or the edit permission is asked: the
// model gets the plugin's refusal and the file stays byte-identical.
//
// The host's rules for plan come first and the project's rules after
// them, the later rule winning, so a project that allows everything (as
// the harness does by default) also allows plan's edits: there the
// plugin's refusal is all that stands between plan and the write. Under
// the host's own rules alone (an empty permission setting) plan's edit
// permission is denied, a second layer that the replace would reach only
// through its edit permission ask, behind the plugin's refusal. With the
// plugin's check taken out, the first case writes the file and the second
// gets the host's "The user has specified a rule which prevents you from
// using this specific tool call." after slim's dry run; both fail here.
func TestAstGrepReplaceDeniedForPlanAgent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		permission map[string]any
	}{
		{"every permission allowed", nil},
		{"host rules alone", map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			const src = "def f(x):\r\n    print(x)\r\n"
			p := astProject(t, map[string]string{"a.py": src})
			p.agent = "plan"
			p.permission = tc.permission
			r := p.run(
				fp.Calls(
					astSearch("print($A)", "python", nil),
					astReplace("print($A)", "log($A)", "python", map[string]any{"dryRun": false}),
				),
				fp.Text("done"),
			)
			agents := r.agents()
			if len(agents) == 0 {
				t.Fatal("the host logged no agent for its model requests")
			}
			for _, a := range agents {
				if a != "plan" {
					t.Fatalf("the run used the agents %v, want only plan", agents)
				}
			}
			offered := r.provider.ScriptedRequests()[0].Tools
			for _, name := range []string{"ast_grep_search", "ast_grep_replace"} {
				if !contains(offered, name) {
					t.Errorf("the host did not offer %s to plan: %v", name, offered)
				}
			}
			wantPrefix(t, "search as plan", r.result(t, 0, 0), "Found 1 match in 1 file\n")
			if got := r.result(t, 0, 1); got != astReadOnlyDenied {
				t.Errorf("replace as plan: got %q, want %q", clip(got, 500), astReadOnlyDenied)
			}
			wantFile(t, p, "a.py", src)
			if got := p.servedRuns("search replace"); len(got) != 0 {
				t.Errorf("slim ran search replace for plan (runs by exit code %v); the plugin must refuse before", got)
			}
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
