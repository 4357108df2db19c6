package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/slimgate/slim/internal/testbin"
)

// exitFileEnv names the file in which every slim process a script starts
// records its exit code, for the exitcode command to check. It is set for
// the scripts only; slim itself never reads it.
const exitFileEnv = "TESTSCRIPT_SLIM_EXIT_FILE"

// TestMain lets the scripts run slim as a command, and removes the binary
// testbin.Shared builds for the tests that run the real executable.
func TestMain(m *testing.M) {
	testscript.Main(testbin.M(m), map[string]func(){
		"slim": func() {
			code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
			if f := os.Getenv(exitFileEnv); f != "" {
				os.WriteFile(f, []byte(strconv.Itoa(code)+"\n"), 0o666)
			}
			os.Exit(code)
		},
	})
}

// TestScripts runs the CLI scripts in testdata: each .txtar file is one
// scenario, in the style of the Go command's own script tests.
//
// Besides the standard commands, a script may use `exitcode N`: it checks
// that the most recent slim process since the previous exitcode exited
// with N. That is the slim of the line before (`! exec slim ...`), or the
// slim a git hook shim ran during `! exec git ...`. Every script line that
// expects slim to fail is followed by one, so the documented exit codes
// (0 done, 1 internal, 2 usage, 3 validation, 4 verification, 5 blocked)
// are under test.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("SLIM_STATE_DIR", env.WorkDir+"/.slim-state")
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/home/.config")
			env.Setenv(exitFileEnv, filepath.Join(env.WorkDir, ".slim-exit"))
			// The directory that holds the slim command alone, for scripts
			// that run slim with a PATH without the other programs
			// (env PATH=$SLIM_TEST_BIN), and the real rg, if any.
			for _, d := range filepath.SplitList(env.Getenv("PATH")) {
				if _, err := os.Stat(filepath.Join(d, "slim")); err == nil && d != "" {
					env.Setenv("SLIM_TEST_BIN", d)
					break
				}
			}
			if rg, err := exec.LookPath("rg"); err == nil {
				env.Setenv("SLIM_TEST_RG", rg)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}

// cmdExitCode implements `exitcode N`. It consumes the record, so a second
// exitcode with no slim run in between fails instead of reading a stale
// code.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) != 1 {
		ts.Fatalf("usage: exitcode N")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	file := ts.Getenv(exitFileEnv)
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		ts.Fatalf("exitcode %d: no slim process ran since the last exitcode", want)
	}
	ts.Check(err)
	ts.Check(os.Remove(file))
	got, err := strconv.Atoi(strings.TrimSpace(string(data)))
	ts.Check(err)
	if got != want {
		ts.Fatalf("slim exited %d, want %d", got, want)
	}
}
