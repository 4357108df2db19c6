package ochost

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParsePartsReadsToolPartsAndTheirTimes(t *testing.T) {
	stdout := strings.Join([]string{
		`not json: the host may print other lines`,
		`{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}`,
		`{"type":"tool_use","sessionID":"ses_1","part":{"tool":"read","callID":"call_1_0","state":{"status":"completed","input":{"filePath":"/p/a"},"output":"<content>","time":{"start":1000,"end":1042}}}}`,
		`{"type":"text","sessionID":"ses_1","part":{"tool":"ignored","state":{"time":{"start":0}}}}`,
		`{"type":"tool_use","sessionID":"ses_1","part":{"tool":"bash","callID":"call_2_0","state":{"status":"error","error":"boom","time":{"start":2000,"end":2000}}}}`,
	}, "\n")
	parts, session, err := ParseParts([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if session != "ses_1" {
		t.Errorf("session %q, want ses_1", session)
	}
	want := []Part{
		{Tool: "read", CallID: "call_1_0", Status: "completed", Input: []byte(`{"filePath":"/p/a"}`), Output: "<content>", Start: 1000, End: 1042},
		{Tool: "bash", CallID: "call_2_0", Status: "error", Error: "boom", Start: 2000, End: 2000},
	}
	if len(parts) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(parts), len(want), parts)
	}
	for i := range want {
		g, w := parts[i], want[i]
		if g.Tool != w.Tool || g.CallID != w.CallID || g.Status != w.Status || string(g.Input) != string(w.Input) ||
			g.Output != w.Output || g.Error != w.Error || g.Start != w.Start || g.End != w.End {
			t.Errorf("part %d = %+v, want %+v", i, g, w)
		}
	}
	if d := parts[0].Duration(); d != 42*time.Millisecond {
		t.Errorf("duration %s, want 42ms", d)
	}
}

func TestParsePartsRefusesAPartThatCannotBeTimed(t *testing.T) {
	for name, time := range map[string]string{
		"no start":           `{"end":5}`,
		"no times":           `{}`,
		"end before start":   `{"start":10,"end":9}`,
		"start but no end":   `{"start":10}`,
		"zero start and end": `{"start":0,"end":0}`,
	} {
		t.Run(name, func(t *testing.T) {
			line := `{"type":"tool_use","part":{"tool":"read","callID":"c","state":{"status":"completed","time":` + time + `}}}`
			_, _, err := ParseParts([]byte(line))
			e, ok := AsError(err)
			if !ok || e.Kind != Output || e.Code != CodePartNoTime {
				t.Fatalf("err = %v, want an %s error %s", err, Output, CodePartNoTime)
			}
		})
	}
}

func TestNewMakesAnIsolatedGitProject(t *testing.T) {
	t.Setenv("SLIM_OCHOST_LEAK", "from the caller")
	root := t.TempDir()
	p, err := New(root, "/opt/slim", map[string]string{"a.txt": "a\n", "src/deep/b.go": "package deep\n"})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]string{"a.txt": "a\n", "src/deep/b.go": "package deep\n"} {
		if got, err := os.ReadFile(p.Path(rel)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", rel, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(p.Dir, ".git")); err != nil || !fi.IsDir() {
		t.Errorf("no git repository in the project: %v", err)
	}
	env := p.Env()
	get := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	for _, k := range []string{"HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "SLIM_STATE_DIR", "SLIM_PLUGIN_LOG"} {
		if v := get(k); !strings.HasPrefix(v, root+string(filepath.Separator)) {
			t.Errorf("%s=%q is not inside the run's root", k, v)
		}
	}
	if get("SLIM_BIN") != "/opt/slim" || get("OPENCODE_DISABLE_AUTOUPDATE") != "1" || get("PATH") != os.Getenv("PATH") {
		t.Errorf("SLIM_BIN, PATH or the host's switches are missing: %v", env)
	}
	if slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "SLIM_OCHOST_LEAK=") }) {
		t.Error("the caller's environment leaked into the host's")
	}
	// Every config folder is seeded, or the host installs its plugin
	// package from the network.
	for _, d := range []string{filepath.Join(p.Dir, ".opencode"), filepath.Join(get("XDG_CONFIG_HOME"), "opencode")} {
		if _, err := os.Stat(filepath.Join(d, "package-lock.json")); err != nil {
			t.Errorf("config folder %s is not seeded: %v", d, err)
		}
		if fi, err := os.Stat(filepath.Join(d, "node_modules")); err != nil || !fi.IsDir() {
			t.Errorf("config folder %s has no node_modules: %v", d, err)
		}
	}
}

func TestWriteConfigPointsTheHostAtTheProviderOnly(t *testing.T) {
	p, err := New(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteConfig("http://127.0.0.1:1/v1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p.Path("opencode.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"baseURL":"http://127.0.0.1:1/v1"`, `"enabled_providers":["fake"]`, `"model":"fake/` + ModelID + `"`, `"permission":{"*":"allow"}`, `"snapshot":false`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("opencode.json lacks %s: %s", want, b)
		}
	}
}

func TestPluginProblemsAreTheWarningsAndErrors(t *testing.T) {
	p, err := New(t.TempDir(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.PluginProblems(); err != nil || len(got) != 0 {
		t.Fatalf("without a log: %v, %v; want none", got, err)
	}
	log := `{"level":"info","message":"loaded"}
{"level":"warn","message":"slim failed; passing"}
not json
{"level":"error","message":"broken"}
{"level":"debug","message":"warn"}
`
	if err := os.WriteFile(p.PluginLog, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := p.PluginProblems()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(got[0], "passing") || !strings.Contains(got[1], "broken") {
		t.Errorf("problems %q, want the warn and the error line", got)
	}
}
