// Package timing runs whole processes and summarises their wall times, for
// the side-by-side start-up comparisons under bench/. Medians, not means:
// these machines are noisy, and one slow run must not move the figure.
package timing

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"time"
)

// Run starts argv with stdin and the extra environment entries (added to
// the process environment), waits for it and returns its wall time and
// combined output. Exit codes 1-5 are slim's decisions and count as runs;
// a crash or a failure to start is an error.
func Run(argv []string, stdin []byte, env ...string) (time.Duration, []byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 && ee.ExitCode() < 6 {
		err = nil
	}
	if err != nil {
		return d, out.Bytes(), fmt.Errorf("%v: %v: %s", argv, err, out.String())
	}
	return d, out.Bytes(), nil
}

// Median returns the median of ds (the upper one for an even count).
func Median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
