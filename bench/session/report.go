package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// goal is the most the plugin may add to a session: 3%.
const goal = 1.03

// report prints the medians of each mode, the ratio of each mode to the
// first (no plugin), the spread of each, and the per-call median of each
// tool. samples[m] are the sessions of modes[m].
func report(w io.Writer, s *session, modes []mode, samples [][]sample, runs, warmup int) {
	fmt.Fprintf(w, "OpenCode session: %d tool calls in %d turns (%d with parallel calls): %s\n",
		len(s.calls), len(s.turns)-1, s.parallelTurns(), s.mix())
	fmt.Fprintf(w, "medians of %d sessions per mode (after %d warm-up each), modes alternating; ratios to %s\n\n", runs, warmup, modes[0].name)
	head := fmt.Sprintf("%-24s", "")
	for _, m := range modes {
		head += fmt.Sprintf(" %12s", m.name)
	}
	for _, m := range modes[1:] {
		head += fmt.Sprintf(" %12s", m.short+"/"+modes[0].short)
	}
	fmt.Fprintln(w, head+"   range (ms) per mode")
	rows := []struct {
		name string
		get  func(sample) time.Duration
	}{
		{"opencode run, wall", func(x sample) time.Duration { return x.wall }},
		{"opencode run, CPU", func(x sample) time.Duration { return x.cpu }},
		{"tool parts, sum", func(x sample) time.Duration { return x.tools }},
	}
	var verdict []string
	for _, row := range rows {
		line := fmt.Sprintf("%-24s", row.name+" (ms)")
		meds := make([]time.Duration, len(modes))
		var spans []string
		for m := range modes {
			var v []time.Duration
			for _, x := range samples[m] {
				v = append(v, row.get(x))
			}
			meds[m] = median(v)
			spans = append(spans, span(v))
			line += fmt.Sprintf(" %12.0f", ms(meds[m]))
		}
		for m := 1; m < len(modes); m++ {
			line += fmt.Sprintf(" %11.3fx", ratio(meds[m], meds[0]))
		}
		fmt.Fprintln(w, line+"   "+strings.Join(spans, " / "))
		verdict = append(verdict, fmt.Sprintf("%s %s", row.name, met(ratio(meds[1], meds[0]))))
	}
	fmt.Fprintf(w, "goal, %s / %s <= %.2f: %s\n", modes[1].name, modes[0].name, goal, strings.Join(verdict, "; "))
	// Sessions of one round ran next to each other, so their ratio is
	// less moved by a load that comes and goes than the ratio of medians.
	for m := 1; m < len(modes); m++ {
		var parts []string
		for _, row := range rows {
			var rs []float64
			for i := range min(len(samples[0]), len(samples[m])) {
				rs = append(rs, ratio(row.get(samples[m][i]), row.get(samples[0][i])))
			}
			if len(rs) == 0 {
				continue
			}
			slices.Sort(rs)
			parts = append(parts, fmt.Sprintf("%s %.3fx (%.3f-%.3f)", row.name, rs[len(rs)/2], rs[0], rs[len(rs)-1]))
		}
		fmt.Fprintf(w, "%s / %s within each round, median (range): %s\n", modes[m].name, modes[0].name, strings.Join(parts, "; "))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "per call, median of the tool parts (ms)\n")
	head = fmt.Sprintf("%-12s %6s", "tool", "calls")
	for _, m := range modes {
		head += fmt.Sprintf(" %12s", m.name)
	}
	for _, m := range modes[1:] {
		head += fmt.Sprintf(" %12s", m.short+"/"+modes[0].short)
	}
	fmt.Fprintln(w, head)
	for _, t := range tools {
		if s.count(t) == 0 {
			continue
		}
		line := fmt.Sprintf("%-12s %6d", t, s.count(t))
		meds := make([]time.Duration, len(modes))
		for m := range modes {
			meds[m] = median(callsOf(samples[m], t))
			line += fmt.Sprintf(" %12.0f", ms(meds[m]))
		}
		for m := 1; m < len(modes); m++ {
			line += fmt.Sprintf(" %11.2fx", ratio(meds[m], meds[0]))
		}
		fmt.Fprintln(w, line)
	}
}

// callsOf is the time of every call of tool t over the sessions xs.
func callsOf(xs []sample, t string) []time.Duration {
	var out []time.Duration
	for _, x := range xs {
		out = append(out, x.perTool[t]...)
	}
	return out
}

func ratio(with, without time.Duration) float64 {
	if without == 0 {
		return 0
	}
	return float64(with) / float64(without)
}

func met(r float64) string {
	if r <= goal {
		return "met"
	}
	return "missed"
}

// span is the smallest and the largest of ds, in ms.
func span(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f-%.0f", ms(slices.Min(ds)), ms(slices.Max(ds)))
}
