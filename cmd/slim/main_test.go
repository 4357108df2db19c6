package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/internal/testbin"
)

// exitFileEnv names the file in which every slim process a script starts
// records its exit code, for the exitcode command to check. It is set for
// the scripts only; slim itself never reads it. The task tools' detached
// settlers and notifiers (`slim tasks _settle`) do not record theirs: they
// outlive the command the script ran, and one that exits late would
// overwrite that command's code.
const exitFileEnv = "TESTSCRIPT_SLIM_EXIT_FILE"

// TestMain lets the scripts run slim as a command, and removes the binary
// testbin.Shared builds for the tests that run the real executable.
func TestMain(m *testing.M) {
	testscript.Main(testbin.M(m), map[string]func(){
		"slim": func() {
			code := run(os.Args, os.Stdin, os.Stdout, os.Stderr)
			detached := len(os.Args) > 2 && os.Args[1] == "tasks" && os.Args[2] == "_settle"
			if f := os.Getenv(exitFileEnv); f != "" && !detached {
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
			env.Values[webKey{}] = webServers{}
			if rg, err := exec.LookPath("rg"); err == nil {
				env.Setenv("SLIM_TEST_RG", rg)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"webserve": cmdWebServe,
			"webhits":  cmdWebHits,
			"opencode": cmdOpenCode,
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

// webServers holds the request counters of the servers scripts start, by
// the variable name the script gave them.
type webServers map[string]*atomic.Int64

// cmdWebServe implements `webserve NAME DIR`: it serves DIR's files over
// http on 127.0.0.1 for the rest of the script and sets $NAME to the
// server's root URL (without the trailing slash) and $NAME_PORT to its
// port. A file's type comes from its extension; a path ending in
// /status-N answers status N.
func cmdWebServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: webserve NAME DIR")
	}
	dir := ts.MkAbs(args[1])
	var hits atomic.Int64
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		var code int
		if _, err := fmt.Sscanf(filepath.Base(r.URL.Path), "status-%d", &code); err == nil {
			w.WriteHeader(code)
			return
		}
		files.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(args[0], srv.URL)
	ts.Setenv(args[0]+"_PORT", srv.URL[strings.LastIndexByte(srv.URL, ':')+1:])
	webCounters(ts)[args[0]] = &hits
}

// cmdWebHits implements `webhits NAME N`: the server started as NAME has
// answered exactly N requests.
func cmdWebHits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: webhits NAME N")
	}
	c, ok := webCounters(ts)[args[0]]
	if !ok {
		ts.Fatalf("webhits: no server %s", args[0])
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	if got := c.Load(); got != int64(want) {
		ts.Fatalf("server %s answered %d requests, want %d", args[0], got, want)
	}
}

// webCounters is the script's table of servers, kept in the script's
// values so that parallel scripts do not share it.
func webCounters(ts *testscript.TestScript) webServers {
	if m, ok := ts.Value(webKey{}).(webServers); ok {
		return m
	}
	ts.Fatalf("webserve: no server table (Setup did not run)")
	return nil
}

type webKey struct{}

// cmdOpenCode implements `opencode NAME`: it serves the fake OpenCode server
// (fixtures/opencodefake) on 127.0.0.1 for the rest of the script and sets
// $NAME to its base URL. Its control plane is under $NAME/__fake/.
func cmdOpenCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: opencode NAME")
	}
	srv := opencodefake.New(opencodefake.Options{})
	url, err := srv.Start()
	ts.Check(err)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(args[0], url)
}
