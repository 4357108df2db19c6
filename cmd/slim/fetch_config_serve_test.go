//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The resident slim reads the user configuration file on each fetch it
// runs, as each process would: a file that opens private addresses, then
// closes them, then is made group-writable gives three different answers
// from one resident, each the same as a process of its own gives.
func TestServedFetchReadsTheConfigFileOnEachRun(t *testing.T) {
	bin := buildSlim(t)
	dir := t.TempDir()
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Served</title></head><body><main><h1>Served</h1><p>The page body, long enough to be the main content of this page.</p></main></body></html>")
	}))
	defer web.Close()
	config := filepath.Join(t.TempDir(), "config.json")
	env := []string{"SLIM_STATE_DIR=" + t.TempDir(), "SLIM_CONFIG=" + config, "SLIM_FETCH_ALLOW_PRIVATE=",
		"SLIM_FETCH_ALLOW_LINK_LOCAL=", "SLIM_FETCH_CACHE=off", "XDG_CACHE_HOME=" + t.TempDir()}
	c := startServe(t, bin, dir, env...)
	args := []string{"fetch", "--include-metadata=false", web.URL + "/page"}
	for i, step := range []struct {
		name, body string
		mode       os.FileMode
		exit       int
		want       string
	}{
		{"opened", `{"fetch": {"allowPrivate": true}}`, 0o600, 0, "The page body"},
		{"closed", `{"fetch": {"allowPrivate": false}}`, 0o600, 5, "loopback"},
		{"group-writable", `{"fetch": {"allowPrivate": true}}`, 0o620, 2, "is writable by its group"},
	} {
		if err := os.WriteFile(config, []byte(step.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(config, step.mode); err != nil {
			t.Fatal(err)
		}
		c.run(int64(i+1), "", args...)
		got := c.wait(int64(i+1), 30*time.Second)
		out, errs, code := processRun(t, bin, dir, "", env, args...)
		served := -1
		if got.Exit != nil {
			served = *got.Exit
		}
		if code != step.exit || served != code {
			t.Fatalf("%s: served exit %d, process exit %d, want %d (stderr %q)", step.name, served, code, step.exit, errs)
		}
		if got.Stdout != out || got.Stderr != errs {
			t.Errorf("%s: served %q / %q, process %q / %q", step.name, got.Stdout, got.Stderr, out, errs)
		}
		if !strings.Contains(out+errs, step.want) {
			t.Errorf("%s: %q / %q lacks %q", step.name, out, errs, step.want)
		}
	}
}
