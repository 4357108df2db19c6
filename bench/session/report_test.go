package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestReportGivesMediansRatiosAndTheVerdict(t *testing.T) {
	mk := func(wall, tools, read time.Duration) sample {
		return sample{wall: wall * time.Millisecond, cpu: wall * time.Millisecond, tools: tools * time.Millisecond,
			perTool: map[string][]time.Duration{"read": {read * time.Millisecond}}}
	}
	samples := [][]sample{
		{mk(1000, 100, 10), mk(9000, 100, 10), mk(1100, 300, 10)}, // medians 1100, 100, 10
		{mk(1122, 150, 20), mk(1000, 150, 20), mk(5000, 150, 20)}, // medians 1122, 150, 20
	}
	var b bytes.Buffer
	report(&b, newSession("/"), []mode{noPlugin, withPlugin}, samples, 3, 1)
	out := b.String()
	for _, want := range []string{
		"60 tool calls in 35 turns",
		"read 20, grep 8, glob 6, bash 12, apply_patch 10, todowrite 4",
		"1100         1122       1.020x", // wall: the medians, not the means
		"1000-9000 / 1000-5000",
		"opencode run, wall met; opencode run, CPU met; tool parts, sum missed",
		"read             20           10           20        2.00x",
		// rounds: 1122/1000, 1000/9000, 5000/1100
		"slim plugin / no plugin within each round, median (range): opencode run, wall 1.122x (0.111-4.545)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
