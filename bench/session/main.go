// Command session measures what slim's OpenCode plugin costs a whole
// session in the real host: one `opencode run` whose scripted model sends
// 60 tool calls in 35 turns (19 of them of several parallel calls) of
// read, grep, glob, bash (cheap commands), apply_patch (small edits that
// succeed) and todowrite, against the scripted fake provider, which
// answers at once, so the host's own work is all there is besides the
// tools. Modes: no plugin, and the plugin as `slim hooks install
// --opencode` writes it (default settings: one resident `slim hook serve`
// answers the hooks); with -percall also the plugin with SLIM_SERVE=0 (one
// slim process per hook call), with -nosync the plugin with
// SLIM_SERVE_SYNC=0 (no synchronous channel: every answer is read through
// the host's event loop). The modes alternate, one session each at a
// time, after -warmup sessions each that do not count.
//
// It prints the medians of the whole `opencode run` wall time, of its CPU
// time (the host and every process it waited for), and of the sum of the
// tool parts' times (the host's own record of each call, from running to
// result, plugin hooks included), with the ratio to no plugin (goal: at
// most 1.03) and the median of the ratios within each round (sessions run
// next to each other, so a load that comes and goes moves it less); then
// the per-call median of each tool's parts per mode, and the load average.
// Every call must complete with the result it should have, every edit must
// land, and with the plugin the plugin must log no problem, must keep its
// resident slim (where it should have one), and slim must have counted the
// session's last calls, or the program stops: a broken plugin must not
// look fast.
//
// For experiments, -plan runs another script (the letters of defaultPlan)
// and each -variant NAME=FILE adds a mode: the plugin installed as usual,
// then FILE written over it (a plugin with parts of its work removed, or
// another plugin altogether). A variant's calls are checked like the
// others', but not that slim saw them: a variant may not ask slim at all.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slimgate/slim/bench/internal/ochost"
	"github.com/slimgate/slim/bench/internal/timing"
)

// mode is one way of running the session.
type mode struct {
	name   string
	short  string // for the ratio columns
	plugin bool
	env    []string // added to the host's environment
	// file, when set, is written over the installed plugin: a variant
	// for an experiment.
	file string
}

var (
	noPlugin   = mode{name: "no plugin", short: "none"}
	withPlugin = mode{name: "slim plugin", short: "plugin", plugin: true}
	// perCall is the plugin without its resident slim: one slim process
	// per hook call, as before `slim hook serve`.
	perCall = mode{name: "SLIM_SERVE=0", short: "SERVE=0", plugin: true, env: []string{"SLIM_SERVE=0"}}
	// noSync is the plugin whose resident slim has no synchronous
	// channel: every hook answer is read through the host's event loop.
	noSync = mode{name: "SLIM_SERVE_SYNC=0", short: "SYNC=0", plugin: true, env: []string{"SLIM_SERVE_SYNC=0"}}
)

// sample is what one session measured.
type sample struct {
	wall, cpu, tools time.Duration
	perTool          map[string][]time.Duration
}

func main() {
	opencode := flag.String("opencode", "", "the OpenCode binary")
	slim := flag.String("slim", "", "the slim binary")
	runs := flag.Int("runs", 7, "sessions per mode")
	warmup := flag.Int("warmup", 1, "sessions per mode run first and not counted")
	keep := flag.Bool("keep", false, "keep every run's project and artifacts")
	percall := flag.Bool("percall", false, "also run the plugin with SLIM_SERVE=0 (one slim process per hook call)")
	nosync := flag.Bool("nosync", false, "also run the plugin with SLIM_SERVE_SYNC=0 (hook answers read through the host's event loop)")
	plan := flag.String("plan", defaultPlan, "the session's turns: one word a turn, one letter a call (r read, g grep, G glob, b bash, p apply_patch, t todowrite)")
	var variants []mode
	flag.Func("variant", "NAME=FILE: also a mode with FILE written over the installed plugin (repeatable)", func(v string) error {
		name, file, ok := strings.Cut(v, "=")
		if !ok || name == "" || file == "" {
			return fmt.Errorf("want NAME=FILE, not %q", v)
		}
		abs, err := filepath.Abs(file)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return err
		}
		variants = append(variants, mode{name: name, short: name, plugin: true, file: abs})
		return nil
	})
	flag.Parse()
	if *opencode == "" || *slim == "" || *runs < 1 || *warmup < 0 {
		fmt.Fprintln(os.Stderr, "usage: session -opencode BIN -slim BIN [-runs N] [-warmup N] [-keep] [-percall] [-nosync] [-plan PLAN] [-variant NAME=FILE]...")
		os.Exit(2)
	}
	if _, err := planSession("/", *plan); err != nil {
		fatal("%v", err)
	}
	for _, p := range []*string{opencode, slim} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal("%v", err)
		}
		*p = abs
	}
	work, err := os.MkdirTemp("", "slim-bench-session-")
	if err != nil {
		fatal("%v", err)
	}
	if !*keep {
		defer os.RemoveAll(work)
	}

	modes := []mode{noPlugin, withPlugin}
	if *percall {
		modes = append(modes, perCall)
	}
	if *nosync {
		modes = append(modes, noSync)
	}
	modes = append(modes, variants...)
	loadBefore := loadAverage()
	samples := make([][]sample, len(modes))
	n := 0
	for round := 0; round < *warmup+*runs; round++ {
		// Alternate which mode goes first from round to round.
		for k := range modes {
			m := (k + round) % len(modes)
			n++
			dir := filepath.Join(work, fmt.Sprintf("run%02d", n))
			s, err := runOnce(dir, *opencode, *slim, *plan, modes[m])
			if err != nil {
				fatal("session %d (%s): %v (artifacts kept in %s)", n, modes[m].name, err, dir)
			}
			if round >= *warmup {
				samples[m] = append(samples[m], s)
			}
			if !*keep {
				os.RemoveAll(dir)
			}
		}
	}
	script, _ := planSession("/", *plan)
	report(os.Stdout, script, modes, samples, *runs, *warmup)
	if la := loadAverage(); la != "" {
		fmt.Printf("\nload average (1, 5, 15 min): %s at the start, %s at the end\n", loadBefore, la)
	}
}

// loadAverage is the machine's load average where the system shows it
// (Linux), else "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// runOnce makes a fresh project in dir, installs the plugin (or a
// variant) when asked, runs the session of plan once and checks it.
func runOnce(dir, opencode, slim, plan string, m mode) (sample, error) {
	proj := filepath.Join(dir, "proj")
	s, err := planSession(proj, plan)
	if err != nil {
		return sample{}, err
	}
	p, err := ochost.New(dir, slim, s.files)
	if err != nil {
		return sample{}, err
	}
	p.AddEnv(m.env...)
	if m.plugin {
		if err := p.Install(slim); err != nil {
			return sample{}, err
		}
	}
	if m.file != "" {
		b, err := os.ReadFile(m.file)
		if err != nil {
			return sample{}, err
		}
		if err := os.WriteFile(filepath.Join(proj, ".opencode", "plugin", "slim.js"), b, 0o644); err != nil {
			return sample{}, err
		}
	}
	r, err := p.Run(opencode, s.turns, 5*time.Minute)
	if err != nil {
		return sample{}, err
	}
	if err := check(s, p, r, m); err != nil {
		return sample{}, err
	}
	out := sample{wall: r.Wall, cpu: r.CPU, perTool: map[string][]time.Duration{}}
	for _, part := range r.Parts {
		out.tools += part.Duration()
		out.perTool[part.Tool] = append(out.perTool[part.Tool], part.Duration())
	}
	return out, nil
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench/session: "+format+"\n", args...)
	os.Exit(1)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median is the median of ds, 0 when there is none (a tool no session
// called).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return timing.Median(ds)
}
