// Command apply measures apply_patch tool calls in the real OpenCode host,
// side by side: the host's own tool with no plugin (host), the host's own
// tool behind slim's plugin, which rescues the patch first (rewrite), and
// slim's apply mode, where the plugin's apply_patch replaces the host's and
// slim writes the files itself (apply). Each run is one `opencode run`
// against a scripted fake provider whose turns each send one apply_patch
// that changes every file of the project (1, 3 or 10 files); a call's time
// is the host's own record of its tool part, from the moment the call runs
// to its result, plugin hooks included. Runs are interleaved by round, and
// the program prints the median per mode and size and the ratios apply /
// rewrite and apply / host. Every call must succeed and every file must
// end as intended, or the program stops: a benchmark of failures is
// worthless.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

const modelID = "gpt-5-fake" // a gpt- model: the host offers apply_patch

var modes = []string{"host", "rewrite", "apply"}

func main() {
	opencode := flag.String("opencode", "", "the OpenCode binary")
	slim := flag.String("slim", "", "the slim binary")
	rounds := flag.Int("rounds", 3, "runs per mode and size")
	calls := flag.Int("calls", 6, "apply_patch calls per run")
	sizesFlag := flag.String("sizes", "1,3,10", "files per patch")
	lines := flag.Int("lines", 400, "lines per file")
	flag.Parse()
	if *opencode == "" || *slim == "" {
		fmt.Fprintln(os.Stderr, "usage: apply -opencode BIN -slim BIN [-rounds N] [-calls N] [-sizes 1,3,10]")
		os.Exit(2)
	}
	for _, p := range []*string{opencode, slim} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal("%v", err)
		}
		*p = abs
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			fatal("bad -sizes %q", *sizesFlag)
		}
		sizes = append(sizes, n)
	}
	work, err := os.MkdirTemp("", "slim-bench-apply-")
	if err != nil {
		fatal("%v", err)
	}
	defer os.RemoveAll(work)

	times := map[string][]time.Duration{}
	runs := 0
	for r := 0; r < *rounds; r++ {
		for _, n := range sizes {
			// Rotate the order of the modes from round to round.
			for k := range modes {
				mode := modes[(k+r)%len(modes)]
				runs++
				dir := filepath.Join(work, fmt.Sprintf("run%d", runs))
				ds, err := runOnce(dir, *opencode, *slim, mode, n, *calls, *lines)
				if err != nil {
					fatal("round %d, %s, %d files: %v (artifacts kept in %s)", r+1, mode, n, err, dir)
				}
				key := fmt.Sprintf("%s/%d", mode, n)
				times[key] = append(times[key], ds...)
				os.RemoveAll(dir)
			}
		}
	}
	fmt.Printf("apply_patch tool call in OpenCode, plugin to result: median ms over %d rounds x %d calls\n", *rounds, *calls)
	fmt.Printf("%-6s %10s %10s %10s %16s %14s\n", "files", "host", "rewrite", "apply", "apply/rewrite", "apply/host")
	for _, n := range sizes {
		h, rw, ap := median(times[fmt.Sprintf("host/%d", n)]), median(times[fmt.Sprintf("rewrite/%d", n)]), median(times[fmt.Sprintf("apply/%d", n)])
		fmt.Printf("%-6d %10.1f %10.1f %10.1f %15.2fx %13.2fx\n", n, ms(h), ms(rw), ms(ap), ms(ap)/ms(rw), ms(ap)/ms(h))
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/apply: "+format+"\n", args...)
	os.Exit(1)
}

// fileText is file i of the project after c calls: call k rewrote line k.
func fileText(i, c, lines int) string {
	var b strings.Builder
	for l := 0; l < lines; l++ {
		if l < c {
			fmt.Fprintf(&b, "file %d line %d edited\n", i, l)
		} else {
			fmt.Fprintf(&b, "file %d line %d\n", i, l)
		}
	}
	return b.String()
}

// patchFor is call k: line k of every file, with a line of context on
// each side where there is one.
func patchFor(k, n int) string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "*** Update File: f%02d.txt\n@@\n", i)
		if k > 0 {
			fmt.Fprintf(&b, " file %d line %d edited\n", i, k-1)
		}
		fmt.Fprintf(&b, "-file %d line %d\n+file %d line %d edited\n file %d line %d\n", i, k, i, k, i, k+1)
	}
	b.WriteString("*** End Patch")
	return b.String()
}

// runOnce sets up a fresh project in dir, runs the host once with calls
// apply_patch calls, and returns each call's time.
func runOnce(dir, opencode, slim, mode string, n, calls, lines int) ([]time.Duration, error) {
	proj := filepath.Join(dir, "proj")
	home := filepath.Join(dir, "home")
	xdg := map[string]string{}
	for _, k := range []string{"DATA", "CONFIG", "CACHE", "STATE"} {
		xdg["XDG_"+k+"_HOME"] = filepath.Join(dir, "xdg", strings.ToLower(k))
	}
	for _, d := range []string{proj, home, filepath.Join(dir, "tmp"), filepath.Join(dir, "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + filepath.Join(dir, "tmp"), "LANG=C.UTF-8",
		"SLIM_BIN=" + slim, "SLIM_STATE_DIR=" + filepath.Join(dir, "state"), "SLIM_PLUGIN_LOG=" + filepath.Join(dir, "plugin.log"),
		"GIT_CONFIG_NOSYSTEM=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
		"OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1",
	}
	for k, v := range xdg {
		env = append(env, k+"="+v)
		if err := os.MkdirAll(v, 0o755); err != nil {
			return nil, err
		}
	}
	// Without a seeded node_modules and lock file in every config folder
	// the host tries to install its plugin package from the network.
	for _, d := range []string{filepath.Join(proj, ".opencode"), filepath.Join(xdg["XDG_CONFIG_HOME"], "opencode")} {
		if err := os.MkdirAll(filepath.Join(d, "node_modules"), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "package-lock.json"), []byte(`{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}`+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(proj, fmt.Sprintf("f%02d.txt", i)), []byte(fileText(i, 0, lines)), 0o644); err != nil {
			return nil, err
		}
	}
	if out, err := command(proj, env, "git", "init", "-q"); err != nil {
		return nil, fmt.Errorf("git init: %v: %s", err, out)
	}
	switch mode {
	case "rewrite":
		if out, err := command(proj, env, slim, "hooks", "install", "--opencode"); err != nil {
			return nil, fmt.Errorf("install: %v: %s", err, out)
		}
	case "apply":
		if out, err := command(proj, env, slim, "hooks", "install", "--opencode", "--apply"); err != nil {
			return nil, fmt.Errorf("install: %v: %s", err, out)
		}
	}
	var script []fp.Turn
	for k := 0; k < calls; k++ {
		script = append(script, fp.Calls(fp.Call("apply_patch", map[string]string{"patchText": patchFor(k, n)})))
	}
	script = append(script, fp.Text("done"))
	srv, err := fp.Start(script, fp.Options{})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	cfg := map[string]any{
		"$schema": "https://opencode.ai/config.json", "autoupdate": false, "share": "disabled",
		"enabled_providers": []string{"fake"}, "model": "fake/" + modelID, "small_model": "fake/" + modelID,
		"lsp": false, "formatter": false, "snapshot": false, "permission": map[string]any{"*": "allow"},
		"provider": map[string]any{"fake": map[string]any{
			"npm": "@ai-sdk/openai-compatible", "name": "fake",
			"options": map[string]any{"baseURL": srv.BaseURL(), "apiKey": "dummy"},
			"models":  map[string]any{modelID: map[string]any{"name": modelID, "tool_call": true, "limit": map[string]any{"context": 128000, "output": 4096}}},
		}},
	}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(proj, "opencode.json"), b, 0o644); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opencode, "run", "--format", "json", "--title", "bench", "do it")
	cmd.Dir, cmd.Env = proj, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		os.WriteFile(filepath.Join(dir, "stderr.log"), stderr.Bytes(), 0o644)
		return nil, fmt.Errorf("opencode run: %v", err)
	}
	ds, err := callTimes(stdout.Bytes())
	if err != nil {
		os.WriteFile(filepath.Join(dir, "stdout.jsonl"), stdout.Bytes(), 0o644)
		return nil, err
	}
	if len(ds) != calls {
		os.WriteFile(filepath.Join(dir, "stdout.jsonl"), stdout.Bytes(), 0o644)
		return nil, fmt.Errorf("%d apply_patch calls completed, want %d", len(ds), calls)
	}
	for i := 0; i < n; i++ {
		got, err := os.ReadFile(filepath.Join(proj, fmt.Sprintf("f%02d.txt", i)))
		if err != nil || string(got) != fileText(i, calls, lines) {
			return nil, fmt.Errorf("f%02d.txt is not as the patches say (%v)", i, err)
		}
	}
	return ds, nil
}

// callTimes reads the completed apply_patch tool parts of a run's JSON
// events: the time from running to result of each.
func callTimes(stdout []byte) ([]time.Duration, error) {
	var out []time.Duration
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Part struct {
				Tool  string `json:"tool"`
				State struct {
					Status string `json:"status"`
					Output string `json:"output"`
					Error  string `json:"error"`
					Time   struct {
						Start int64 `json:"start"`
						End   int64 `json:"end"`
					} `json:"time"`
				} `json:"state"`
			} `json:"part"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Type != "tool_use" || ev.Part.Tool != "apply_patch" {
			continue
		}
		st := ev.Part.State
		if st.Status != "completed" || !strings.HasPrefix(st.Output, "Success.") {
			return nil, fmt.Errorf("an apply_patch call did not succeed: %s %q", st.Status, st.Error+st.Output)
		}
		if st.Time.Start == 0 || st.Time.End < st.Time.Start {
			return nil, fmt.Errorf("an apply_patch part has no time: %+v", st.Time)
		}
		out = append(out, time.Duration(st.Time.End-st.Time.Start)*time.Millisecond)
	}
	return out, sc.Err()
}

func command(dir string, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd.CombinedOutput()
}
