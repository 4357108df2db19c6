package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/slimgate/slim/search/astgrep/astgreptest"
)

// TestSearchASTScripts runs the search_ast*.txtar scripts with the real
// ast-grep (astgreptest.Binary: skipped without one, a failure under
// SLIM_E2E=require) first on PATH. The scripts skip themselves when no
// ast-grep is on PATH, so TestScripts, which runs every script, passes over
// them unless the machine has one of its own.
func TestSearchASTScripts(t *testing.T) {
	bin := astgreptest.Binary(t)
	files, err := filepath.Glob(filepath.Join("testdata", "search_ast*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no search_ast scripts: %v", err)
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLIM_STATE_DIR", env.WorkDir+"/.slim-state")
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/home/.config")
			env.Setenv(exitFileEnv, filepath.Join(env.WorkDir, ".slim-exit"))
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("AST_GREP", bin)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}
