package timing

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a measured process: with
// TIMING_EXIT set it prints one line and exits with that code.
func TestMain(m *testing.M) {
	if code, ok := os.LookupEnv("TIMING_EXIT"); ok {
		n, _ := strconv.Atoi(code)
		os.Stdout.WriteString("helper\n")
		os.Exit(n)
	}
	os.Exit(m.Run())
}

func TestMeasureCountsSlimDecisionsAsRuns(t *testing.T) {
	for _, c := range []struct {
		exit    string
		wantErr bool
	}{
		{"0", false},
		{"3", false}, // a validation refusal is an answer, not a failure
		{"5", false},
		{"7", true},
	} {
		u, out, err := Measure([]string{os.Args[0]}, nil, "TIMING_EXIT="+c.exit)
		if (err != nil) != c.wantErr {
			t.Errorf("exit %s: err %v, want error %v", c.exit, err, c.wantErr)
		}
		if string(out) != "helper\n" {
			t.Errorf("exit %s: output %q", c.exit, out)
		}
		if u.Wall <= 0 || u.CPU < 0 {
			t.Errorf("exit %s: wall %v, cpu %v", c.exit, u.Wall, u.CPU)
		}
		if runtime.GOOS == "linux" && u.Faults <= 0 {
			t.Errorf("exit %s: %d page faults; a process start has some", c.exit, u.Faults)
		}
	}
}

func TestMedianIsTheMiddleValue(t *testing.T) {
	if got := Median([]time.Duration{5, 1, 9, 3, 7}); got != 5 {
		t.Errorf("odd count: %v, want 5", got)
	}
	if got := Median([]int64{4, 1, 3, 2}); got != 3 {
		t.Errorf("even count: %v, want the upper middle 3", got)
	}
}
