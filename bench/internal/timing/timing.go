// Package timing runs whole processes and summarises their costs, for
// the side-by-side start-up comparisons under bench/. Medians, not means:
// these machines are noisy, and one slow run must not move the figure.
package timing

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"time"
)

// Usage is what one run of a process cost. CPU time (user and system) and
// minor page faults are steadier than wall time on a busy machine: a
// process waiting for a core accrues neither, and a start-up's page faults
// are nearly the same count on every run.
type Usage struct {
	Wall, CPU time.Duration
	Faults    int64
}

// Run starts argv with stdin and the extra environment entries (added to
// the process environment), waits for it and returns its wall time and
// combined output. Exit codes 1-5 are slim's decisions and count as runs;
// a crash or a failure to start is an error.
func Run(argv []string, stdin []byte, env ...string) (time.Duration, []byte, error) {
	u, out, err := Measure(argv, stdin, env...)
	return u.Wall, out, err
}

// Measure is Run that returns the process's CPU time and minor page faults
// with its wall time.
func Measure(argv []string, stdin []byte, env ...string) (Usage, []byte, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	u := Usage{Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		u.CPU = ps.UserTime() + ps.SystemTime()
		u.Faults = minorFaults(ps)
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 && ee.ExitCode() < 6 {
		err = nil
	}
	if err != nil {
		return u, out.Bytes(), fmt.Errorf("%v: %v: %s", argv, err, out.String())
	}
	return u, out.Bytes(), nil
}

// Median returns the median of ds (the upper one for an even count).
func Median[T time.Duration | int64](ds []T) T {
	s := append([]T(nil), ds...)
	slices.Sort(s)
	return s[len(s)/2]
}
