package tasks

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Timeouts are the deadlines of the task tools. Each bounds how long the
// caller waits, never how long anything stays owned: a remote write that
// outlives its deadline keeps its lease until it settles.
type Timeouts struct {
	// Status bounds one read of the live status map.
	Status time.Duration
	// Message bounds how long task_message waits for the host.
	Message time.Duration
	// Abort bounds how long task_cancel waits for the abort call.
	Abort time.Duration
	// Verify, Poll and Stable shape the check that an aborted session
	// stayed stopped: poll every Poll for at most Verify, and require
	// Stable of unbroken quiescence.
	Verify, Poll, Stable time.Duration
	// Baseline bounds the revive's read of the last child message.
	Baseline time.Duration
	// Admission bounds how long task_revive waits for the host to accept
	// the prompt before it answers admission_unknown.
	Admission time.Duration
	// Launch bounds each host call of a launch.
	Launch time.Duration
	// StopGrace is the least time between two non-busy observations of a
	// running job before it counts as stopped.
	StopGrace time.Duration
	// Stuck is how long a busy task may show no activity before
	// task_status calls it possibly stuck.
	Stuck time.Duration
	// Read bounds the reads of transcripts and sessions.
	Read time.Duration
	// SafetyCap bounds a settler's wait for a remote write; after it the
	// outcome is recorded as orphaned, never as failed.
	SafetyCap time.Duration
	// Notify bounds how long the notifier holds the terminal-notification
	// lease for one attempt to tell the parent a run ended; the request may
	// go on after it, without the lease.
	Notify time.Duration
}

// DefaultTimeouts are the production deadlines.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Status:    5 * time.Second,
		Message:   10 * time.Second,
		Abort:     10 * time.Second,
		Verify:    1500 * time.Millisecond,
		Poll:      150 * time.Millisecond,
		Stable:    300 * time.Millisecond,
		Baseline:  5 * time.Second,
		Admission: 10 * time.Second,
		Launch:    10 * time.Second,
		StopGrace: 5 * time.Second,
		Stuck:     120 * time.Second,
		Read:      5 * time.Second,
		SafetyCap: 10 * time.Minute,
		Notify:    10 * time.Second,
	}
}

// timeoutKnobs names the environment variable of each timeout, in
// milliseconds, so tests and operators can change them.
func (t *Timeouts) knobs() []struct {
	name string
	d    *time.Duration
} {
	return []struct {
		name string
		d    *time.Duration
	}{
		{"SLIM_TASKS_STATUS_TIMEOUT_MS", &t.Status},
		{"SLIM_TASKS_MESSAGE_TIMEOUT_MS", &t.Message},
		{"SLIM_TASKS_ABORT_TIMEOUT_MS", &t.Abort},
		{"SLIM_TASKS_VERIFY_TIMEOUT_MS", &t.Verify},
		{"SLIM_TASKS_VERIFY_POLL_MS", &t.Poll},
		{"SLIM_TASKS_VERIFY_STABLE_MS", &t.Stable},
		{"SLIM_TASKS_BASELINE_TIMEOUT_MS", &t.Baseline},
		{"SLIM_TASKS_ADMISSION_TIMEOUT_MS", &t.Admission},
		{"SLIM_TASKS_LAUNCH_TIMEOUT_MS", &t.Launch},
		{"SLIM_TASKS_STOP_GRACE_MS", &t.StopGrace},
		{"SLIM_TASKS_STUCK_AFTER_MS", &t.Stuck},
		{"SLIM_TASKS_READ_TIMEOUT_MS", &t.Read},
		{"SLIM_TASKS_SAFETY_CAP_MS", &t.SafetyCap},
		{"SLIM_TASKS_NOTIFY_TIMEOUT_MS", &t.Notify},
	}
}

// TimeoutsFromEnv returns the defaults with every SLIM_TASKS_*_MS
// variable that getenv reports applied. A value that is not a positive
// whole number of milliseconds is a Usage error.
func TimeoutsFromEnv(getenv func(string) string) (Timeouts, error) {
	t := DefaultTimeouts()
	for _, k := range t.knobs() {
		v := strings.TrimSpace(getenv(k.name))
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n > int64(24*time.Hour/time.Millisecond) {
			return t, usageErr("%s=%q: want a whole number of milliseconds between 1 and 86400000", k.name, v)
		}
		*k.d = time.Duration(n) * time.Millisecond
	}
	return t, nil
}

// Describe lists every timeout with its variable, for --print-config.
func (t Timeouts) Describe() []string {
	var out []string
	for _, k := range t.knobs() {
		out = append(out, fmt.Sprintf("%s=%d", k.name, k.d.Milliseconds()))
	}
	return out
}

// Config is what every task command needs besides its request.
type Config struct {
	// StateDir is slim's state root; the store lives under its tasks/.
	StateDir string
	// ServerURL is the OpenCode server when the request names none.
	ServerURL string
	// Username and Password are the server's basic-auth credentials
	// (OPENCODE_SERVER_USERNAME, OPENCODE_SERVER_PASSWORD).
	Username, Password string
	// OrchestratorAgents are the agents that may cancel, revive and wait
	// for the user, and whose sessions become managed parents.
	OrchestratorAgents []string
	// Timeouts are the deadlines.
	Timeouts Timeouts
	// SettlerPath and SettlerArgs start the detached settler: the program
	// and its argv (argv[0] included) up to the op arguments, normally
	// this slim with "tasks _settle".
	SettlerPath string
	SettlerArgs []string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// NoNotify turns off the parent notification of runs slim started
	// (SLIM_TASKS_NOTIFY=0): the board and task_status still show them.
	NoNotify bool
	// CrashAt, for crash tests only, names a point of the send rule at
	// which the process kills itself (SIGKILL, no clean-up), as a crash
	// there would: CrashCaptured, CrashSent or CrashAnswered.
	CrashAt string
}

// The crash points of Config.CrashAt.
const (
	// CrashCaptured: the tool call journalled the op and took the lease,
	// and dies before it starts the settler (nothing was sent).
	CrashCaptured = "captured"
	// CrashSent: the settler marked the op sent and dies before sending
	// (for a launch, which sends its prompt itself: the tool call, once
	// the job is recorded).
	CrashSent = "sent"
	// CrashAnswered: the host answered the settler (or the launching tool
	// call), which dies before it records the outcome.
	CrashAnswered = "answered"
)

// crashPoint kills the process at point when the crash tests ask for it.
func (e *engine) crashPoint(point string) {
	if e.cfg.CrashAt == point {
		killSelf()
	}
}

// DefaultOrchestratorAgents returns the agents that own background tasks
// when SLIM_TASKS_ORCHESTRATORS names none: oh-my-opencode-slim's
// orchestrator and OpenCode's own primary agent.
func DefaultOrchestratorAgents() []string { return []string{"orchestrator", "build"} }

// timeouts are the configured deadlines, the defaults when none are set.
func (c *Config) timeouts() Timeouts {
	if c.Timeouts == (Timeouts{}) {
		return DefaultTimeouts()
	}
	return c.Timeouts
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now().UTC()
	}
	return time.Now().UTC()
}

func (c *Config) isOrchestrator(agent string) bool {
	if agent == "" {
		return true
	}
	list := c.OrchestratorAgents
	if len(list) == 0 {
		list = DefaultOrchestratorAgents()
	}
	for _, a := range list {
		if a == agent {
			return true
		}
	}
	return false
}

func (c *Config) settler() (string, []string) {
	if c.SettlerPath != "" {
		return c.SettlerPath, c.SettlerArgs
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exe, []string{os.Args[0], "tasks", "_settle"}
}
