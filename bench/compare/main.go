// Command compare runs several commands side by side, interleaved, and
// prints each one's median wall time and its ratio to the first command,
// then the median CPU time (user and system) with its ratio, and the median
// count of minor page faults. Interleaving spreads machine noise evenly
// over the commands; medians and ratios are what the benchmarks quote,
// never single absolute times. The CPU time and the page faults do not
// count waiting for a core, so they move less than the wall time when the
// machine is busy.
//
// Usage:
//
//	compare [-n 31] [-stdin FILE]... -- NAME=CMD [ARGS...] ;; NAME=CMD [ARGS...] ...
//
// Commands are separated by a ";;" argument. A command's stdin is the file
// given with @FILE as its last argument (the "@FILE" is removed), or empty.
// A command written NAME=serve:SLIM ARGS... is not started as a process:
// one `SLIM hook serve` (started once, before the runs, and shared by every
// such command of that SLIM) runs `slim ARGS...` for each run, as the
// OpenCode plugin has its tool commands run. Its row shows the wall time
// from the request to the answer and, marked "~", the mean CPU time of the
// resident and the programs it ran meanwhile (the kernel counts a running
// process's time in 10 ms ticks, so a median of single runs would say
// nothing); page faults are not split per command and show as "-".
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slimgate/slim/bench/internal/timing"
)

type command struct {
	name  string
	argv  []string
	stdin []byte
	// served is the resident slim that runs argv (slim's arguments), or
	// nil for a process of its own.
	served *timing.Resident
}

func main() {
	n := flag.Int("n", 31, "runs per command")
	warm := flag.Int("warmup", 3, "unmeasured warm-up runs per command")
	flag.Parse()
	cmds, err := parse(flag.Args())
	if err != nil || len(cmds) == 0 {
		fmt.Fprintln(os.Stderr, "compare:", err)
		fmt.Fprintln(os.Stderr, "usage: compare [-n N] NAME=CMD ARGS... ';;' NAME=serve:SLIM ARGS... ';;' ...")
		os.Exit(2)
	}
	residents := map[string]*timing.Resident{}
	for i, c := range cmds {
		bin, ok := strings.CutPrefix(c.argv[0], "serve:")
		if !ok {
			continue
		}
		r := residents[bin]
		if r == nil {
			if r, err = timing.StartResident(bin); err != nil {
				fmt.Fprintf(os.Stderr, "compare: %s: %v\n", c.name, err)
				os.Exit(1)
			}
			residents[bin] = r
			defer r.Close()
		}
		cmds[i].served, cmds[i].argv = r, c.argv[1:]
	}
	for i := 0; i < *warm; i++ {
		for _, c := range cmds {
			if _, err := runOnce(c); err != nil {
				fmt.Fprintf(os.Stderr, "compare: %s: %v\n", c.name, err)
				os.Exit(1)
			}
		}
	}
	runs := make([][]timing.Usage, len(cmds))
	for i := 0; i < *n; i++ {
		for j, c := range cmds {
			u, err := runOnce(c)
			if err != nil {
				fmt.Fprintf(os.Stderr, "compare: %s: %v\n", c.name, err)
				os.Exit(1)
			}
			runs[j] = append(runs[j], u)
		}
	}
	wall0, _, _ := medians(runs[0])
	// CPU ratios are to the first command that runs as a process: a served
	// one has no CPU time of its own.
	var cpu0 time.Duration
	for j, c := range cmds {
		if c.served == nil {
			_, cpu0, _ = medians(runs[j])
			break
		}
	}
	fmt.Printf("%-28s %8s %12s %8s %12s %8s %8s\n", "command", "runs", "median", "ratio", "cpu", "ratio", "faults")
	for j, c := range cmds {
		wall, cpu, faults := medians(runs[j])
		if c.served != nil {
			// The resident's CPU time comes in clock ticks: its mean
			// over the runs, marked "~", stands in for the median.
			cpuText, ratio := "-", ""
			if m := c.served.CPUMean(); m >= 0 {
				cpuText = "~" + m.Round(time.Microsecond).String()
				if cpu0 > 0 {
					ratio = fmt.Sprintf("%7.2fx", float64(m)/float64(cpu0))
				}
			}
			fmt.Printf("%-28s %8d %12s %7.2fx %12s %8s %8s\n", c.name, len(runs[j]),
				wall.Round(time.Microsecond), float64(wall)/float64(wall0), cpuText, ratio, "-")
			continue
		}
		fmt.Printf("%-28s %8d %12s %7.2fx %12s %7.2fx %8d\n", c.name, len(runs[j]),
			wall.Round(time.Microsecond), float64(wall)/float64(wall0),
			cpu.Round(time.Microsecond), float64(cpu)/float64(cpu0), faults)
	}
}

// medians returns the median wall time, CPU time and page faults of runs,
// each taken on its own.
func medians(runs []timing.Usage) (wall, cpu time.Duration, faults int64) {
	var w, c []time.Duration
	var f []int64
	for _, u := range runs {
		w, c, f = append(w, u.Wall), append(c, u.CPU), append(f, u.Faults)
	}
	return timing.Median(w), timing.Median(c), timing.Median(f)
}

func parse(args []string) ([]command, error) {
	var cmds []command
	var cur []string
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		name, first, ok := strings.Cut(cur[0], "=")
		if !ok {
			return fmt.Errorf("command %q must start with NAME=", cur[0])
		}
		c := command{name: name, argv: append([]string{first}, cur[1:]...)}
		if last := c.argv[len(c.argv)-1]; strings.HasPrefix(last, "@") {
			b, err := os.ReadFile(last[1:])
			if err != nil {
				return err
			}
			c.stdin = b
			c.argv = c.argv[:len(c.argv)-1]
		}
		cmds = append(cmds, c)
		cur = nil
		return nil
	}
	for _, a := range args {
		if a == ";;" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur = append(cur, a)
	}
	return cmds, flush()
}

func runOnce(c command) (timing.Usage, error) {
	if c.served != nil {
		u, _, err := c.served.Run(c.argv, c.stdin)
		return u, err
	}
	u, _, err := timing.Measure(c.argv, c.stdin)
	return u, err
}
