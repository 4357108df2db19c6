package timing

import (
	"bufio"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for a measured process: with
// TIMING_EXIT set it prints one line and exits with that code. With
// TIMING_RESIDENT set it stands in for `slim hook serve`: each run frame is
// answered with exit code args[0] and stdout "ran " + args[1], under the
// frame's id (one more than it, for args[0] "badid").
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv("TIMING_RESIDENT"); ok {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			var f struct {
				ID  int64 `json:"id"`
				Run struct {
					Args []string `json:"args"`
				} `json:"run"`
			}
			json.Unmarshal(in.Bytes(), &f)
			code, err := strconv.Atoi(f.Run.Args[0])
			if err != nil {
				f.ID++
			}
			b, _ := json.Marshal(map[string]any{"id": f.ID, "exit": code, "stdout": "ran " + f.Run.Args[1]})
			os.Stdout.Write(append(b, '\n'))
		}
		os.Exit(0)
	}
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

func TestResidentRunsCountSlimDecisionsAndCheckTheReply(t *testing.T) {
	r, err := StartResident(os.Args[0], "TIMING_RESIDENT=1")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		exit    string
		wantErr bool
	}{
		{"0", false},
		{"4", false}, // a refusal is an answer
		{"9", true},
		{"badid", true}, // a reply for another request
	} {
		u, out, err := r.Run([]string{c.exit, "x" + c.exit}, []byte("in"))
		if (err != nil) != c.wantErr {
			t.Errorf("exit %s: err %v, want error %v", c.exit, err, c.wantErr)
		}
		if !c.wantErr && string(out) != "ran x"+c.exit {
			t.Errorf("exit %s: output %q", c.exit, out)
		}
		if u.Wall <= 0 {
			t.Errorf("exit %s: wall %v", c.exit, u.Wall)
		}
	}
	if err := r.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}
