package timing

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Resident is one `slim hook serve` process, the resident slim the OpenCode
// plugin keeps, driven the way the plugin drives it: a command is one run
// frame written and one reply line read, no process started for it. It
// times the commands a benchmark would otherwise run as processes of their
// own, one at a time.
type Resident struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	seq  int64
	cpu  time.Duration // CPU time of the measured runs
	runs int
}

// StartResident starts bin's `hook serve` with the extra environment
// entries added to this process's environment.
func StartResident(bin string, env ...string) (*Resident, error) {
	cmd := exec.Command(bin, "hook", "serve")
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Resident{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// Run runs `slim ARGS` in the resident slim with stdin, and returns its wall
// time from the frame's write to the reply's last byte, and the command's
// stdout and stderr. As with Measure, exit codes 1-5 are slim's decisions
// and count as runs. Usage.CPU is the CPU time the resident and the
// children it waited for (ripgrep, ast-grep) took meanwhile, as the kernel
// counts it for a process: in clock ticks (10 ms), so one run's figure is
// coarse and only a mean over many runs (CPUMean) says much.
func (r *Resident) Run(args []string, stdin []byte) (Usage, []byte, error) {
	before := cpuTicks(r.cmd.Process.Pid)
	u, out, err := r.run(args, stdin)
	if after := cpuTicks(r.cmd.Process.Pid); before >= 0 && after >= before {
		u.CPU = time.Duration(after-before) * tick
		r.cpu += u.CPU
		r.runs++
	}
	return u, out, err
}

// CPUMean is the mean CPU time of the runs so far (see Run), or -1 when
// it could not be read.
func (r *Resident) CPUMean() time.Duration {
	if r.runs == 0 {
		return -1
	}
	return r.cpu / time.Duration(r.runs)
}

func (r *Resident) run(args []string, stdin []byte) (Usage, []byte, error) {
	r.seq++
	frame, err := json.Marshal(map[string]any{"id": r.seq, "run": map[string]any{"args": args, "stdin": string(stdin)}})
	if err != nil {
		return Usage{}, nil, err
	}
	start := time.Now()
	if _, err := r.in.Write(append(frame, '\n')); err != nil {
		return Usage{}, nil, fmt.Errorf("resident slim: %w", err)
	}
	line, err := r.out.ReadBytes('\n')
	u := Usage{Wall: time.Since(start)}
	if err != nil {
		return u, nil, fmt.Errorf("resident slim: no reply: %w", err)
	}
	var reply struct {
		ID     int64  `json:"id"`
		Exit   *int   `json:"exit"`
		Stdout string `json:"stdout"`
		Stderr string `json:"stderr"`
	}
	if err := json.Unmarshal(line, &reply); err != nil || reply.ID != r.seq || reply.Exit == nil {
		return u, line, fmt.Errorf("resident slim: unexpected reply %q", line)
	}
	out := []byte(reply.Stdout + reply.Stderr)
	if *reply.Exit < 0 || *reply.Exit > 5 {
		return u, out, fmt.Errorf("%v served: exit %d: %s", args, *reply.Exit, out)
	}
	return u, out, nil
}

// Close ends the resident slim's input and waits for it to leave.
func (r *Resident) Close() error {
	r.in.Close()
	return r.cmd.Wait()
}
