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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/slimgate/slim/bench/internal/ochost"
	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

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
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("f%02d.txt", i)] = fileText(i, 0, lines)
	}
	p, err := ochost.New(dir, slim, files)
	if err != nil {
		return nil, err
	}
	switch mode {
	case "rewrite":
		err = p.Install(slim)
	case "apply":
		err = p.Install(slim, "--apply")
	}
	if err != nil {
		return nil, err
	}
	var script []fp.Turn
	for k := 0; k < calls; k++ {
		script = append(script, fp.Calls(fp.Call("apply_patch", map[string]string{"patchText": patchFor(k, n)})))
	}
	script = append(script, fp.Text("done"))
	r, err := p.Run(opencode, script, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	ds, err := callTimes(r.Parts)
	if err != nil {
		return nil, err
	}
	if len(ds) != calls {
		return nil, fmt.Errorf("%d apply_patch calls completed, want %d", len(ds), calls)
	}
	for i := 0; i < n; i++ {
		got, err := os.ReadFile(p.Path(fmt.Sprintf("f%02d.txt", i)))
		if err != nil || string(got) != fileText(i, calls, lines) {
			return nil, fmt.Errorf("f%02d.txt is not as the patches say (%v)", i, err)
		}
	}
	return ds, nil
}

// callTimes returns the time of each apply_patch part of a run, from
// running to result; every one must have succeeded.
func callTimes(parts []ochost.Part) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range parts {
		if part.Tool != "apply_patch" {
			continue
		}
		if part.Status != "completed" || !strings.HasPrefix(part.Output, "Success.") {
			return nil, fmt.Errorf("an apply_patch call did not succeed: %s %q", part.Status, part.Error+part.Output)
		}
		out = append(out, part.Duration())
	}
	return out, nil
}
