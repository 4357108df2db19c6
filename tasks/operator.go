package tasks

import (
	"context"
	"fmt"
	"html"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/slimgate/slim/tasks/internal/store"
)

// openScope opens the engine of a scope named by an operator.
func openScope(cfg Config, sc HostScope) (*engine, error) {
	s, err := cfg.hostScope(sc)
	if err != nil {
		return nil, err
	}
	return open(cfg, s)
}

// Reconcile runs one bounded observation pass for a parent's jobs (every
// parent's and every managed orchestrator's when parent is empty) and
// returns the board afterwards. A pass also settles what dead processes
// left behind, so it runs for a parent without jobs too.
func Reconcile(ctx context.Context, cfg Config, sc HostScope, parent string) (string, error) {
	e, err := openScope(cfg, sc)
	if err != nil {
		return "", err
	}
	parents := []string{parent}
	if parent == "" {
		parents = nil
		if err := e.view(func(st *store.State) error {
			seen := map[string]bool{}
			for j := range st.Jobs() {
				seen[j.ParentSessionID] = true
			}
			for p := range st.Orchestrators {
				seen[p] = true
			}
			parents = slices.Sorted(maps.Keys(seen))
			return nil
		}); err != nil {
			return "", err
		}
	}
	var snap snapshot
	for i, p := range parents {
		// One map read serves every parent; a v2 snapshot is a budget of
		// probes, so there each parent gets its own.
		if i == 0 || e.v2() {
			snap = e.snapshot(ctx)
		}
		if err := e.reconcile(ctx, p, "", snap); err != nil {
			return "", err
		}
	}
	return e.board(parent, false)
}

// Board renders the parent's board, as the orchestrator is shown it.
// With record, the terminal runs it shows are remembered as shown, so a
// later acknowledgement can mark them consumed.
func Board(cfg Config, sc HostScope, parent string, record bool) (string, error) {
	e, err := openScope(cfg, sc)
	if err != nil {
		return "", err
	}
	return e.board(parent, record)
}

// boardLine formats one board entry: values escaped, on one line, cut.
func boardLine(parts ...string) string {
	for i, p := range parts {
		parts[i] = html.EscapeString(oneLine(p))
	}
	return cut(strings.Join(parts, " / "), 160)
}

func (e *engine) board(parent string, record bool) (string, error) {
	var out string
	fn := func(st *store.State) error {
		out = renderBoard(st, parent, e.now(), record)
		return nil
	}
	if record {
		return out, e.update(fn)
	}
	return out, e.view(fn)
}

// renderBoard renders the board of parent (every parent's when empty).
// Running jobs show how long they have run and when they were last seen
// busy, so an orchestrator does not cancel a live task for want of
// evidence.
func renderBoard(st *store.State, parent string, now time.Time, record bool) string {
	var active, reusable, retained []string
	var shown []store.Injection
	for _, j := range sortedJobs(st, parent) {
		status := string(j.State)
		switch {
		case j.State == store.JobRunning && j.LastLaunchedAt.After(j.LaunchedAt):
			status = "running [resumed]"
		case j.State == store.JobRunning && j.StatusUncertain:
			status = "running, status uncertain"
		case j.TerminalUnreconciled:
			status += ", unreconciled"
			if j.State == store.JobStopped {
				status += ", task_revive only"
			}
		}
		line := "- " + boardLine(j.Alias, j.TaskID, j.Agent, status)
		line += "\n  Objective: " + boardLine(j.Description)
		switch {
		case j.State == store.JobRunning:
			line += fmt.Sprintf("\n  Running for: %s", age(now, j.RunStartedAt))
			if !j.LastLiveBusyAt.IsZero() {
				line += fmt.Sprintf("; last seen busy %s ago", age(now, j.LastLiveBusyAt))
			} else {
				line += "; not yet seen busy"
			}
			if j.StatusUncertain {
				line += "\n  Status: " + boardLine(j.LastStatusError)
			}
			active = append(active, line)
		case j.TerminalUnreconciled:
			line += "\n  Result: " + boardLine(j.ResultSummary)
			active = append(active, line)
			shown = append(shown, store.Injection{TaskID: j.TaskID, Generation: j.Generation, TerminalRevision: j.TerminalRevision, PromptShapeKey: "board"})
		case j.State == store.JobStopped:
			retained = append(retained, line)
		default:
			reusable = append(reusable, "- "+boardLine(j.Alias, j.TaskID, j.Agent, string(terminalOf(j))+", reconciled"))
		}
	}
	if record && parent != "" {
		if len(shown) > 0 {
			st.Injections[parent] = shown
		} else {
			delete(st.Injections, parent)
		}
	}
	var b strings.Builder
	b.WriteString("<system-reminder>\n### Background Job Board\nSENTINEL: background-job-board-v2\n")
	b.WriteString("Background tasks of this session. Use task_status to inspect one, task_result to read a finished one, task_message to queue a note, task_cancel to stop one and task_revive to resume one. Do not launch a duplicate of a task listed here.\n")
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		b.WriteString("\n#### " + title + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	section("Active / Unreconciled", active)
	section("Reusable Sessions", reusable)
	section("Retained / Recovery", retained)
	if len(active)+len(reusable)+len(retained) == 0 {
		b.WriteString("\n(no background tasks)\n")
	}
	b.WriteString("</system-reminder>")
	return b.String()
}

// age formats a duration for the board in whole seconds.
func age(now, t time.Time) string {
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		d = 0
	}
	return d.String()
}

func sortedJobs(st *store.State, parent string) []*store.Job {
	if parent != "" {
		return jobsOf(st, parent)
	}
	var out []*store.Job
	for j := range st.Jobs() {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].ParentSessionID != out[b].ParentSessionID {
			return out[a].ParentSessionID < out[b].ParentSessionID
		}
		return out[a].LaunchedAt.Before(out[b].LaunchedAt)
	})
	return out
}

// LeaseInfo is one lease with the op it protects, for operators.
type LeaseInfo struct {
	Lease *store.Lease `json:"lease"`
	Op    *store.Op    `json:"op,omitempty"`
	Job   *store.Job   `json:"job,omitempty"`
}

// Inspection is the scope's leases and unsettled ops.
type Inspection struct {
	Store  string      `json:"store"`
	Leases []LeaseInfo `json:"leases"`
	Ops    []*store.Op `json:"ops"`
}

// InspectLeases lists every lease and every op of the scope.
func InspectLeases(cfg Config, sc HostScope) (*Inspection, error) {
	e, err := openScope(cfg, sc)
	if err != nil {
		return nil, err
	}
	in := &Inspection{Store: e.st.Path(), Leases: []LeaseInfo{}, Ops: []*store.Op{}}
	err = e.view(func(st *store.State) error {
		for _, l := range st.Leases {
			in.Leases = append(in.Leases, LeaseInfo{Lease: l, Op: st.Ops[l.OpID], Job: st.Job(l.TaskID)})
		}
		for _, op := range st.Ops {
			in.Ops = append(in.Ops, op)
		}
		return nil
	})
	sort.Slice(in.Leases, func(a, b int) bool { return in.Leases[a].Lease.TaskID < in.Leases[b].Lease.TaskID })
	sort.Slice(in.Ops, func(a, b int) bool { return in.Ops[a].CreatedAt.Before(in.Ops[b].CreatedAt) })
	return in, err
}

// BreakLease releases a task's lease, whatever its state, as an operator's
// decision. A held lease (a live owner) is refused unless force: its
// owner may still be sending. A relaunch lease whose prompt may have been
// admitted needs confirmNotAdmitted, the operator's word that it was
// not. The job, if any, is marked uncertain: nobody knows what the
// broken operation did.
func BreakLease(cfg Config, sc HostScope, taskID string, force, confirmNotAdmitted bool) (*store.Lease, error) {
	e, err := openScope(cfg, sc)
	if err != nil {
		return nil, err
	}
	var broken *store.Lease
	err = e.update(func(st *store.State) error {
		l := st.Leases[taskID]
		if l == nil {
			return usageErr("task %s has no lease", taskID)
		}
		if l.State == store.LeaseHeld && !force {
			return usageErr("task %s's %s lease is held by a live owner (%s); pass --force to break it anyway", taskID, l.Kind, l.Owner)
		}
		op := st.Ops[l.OpID]
		if l.Kind == store.LeaseRelaunch && op != nil && op.Phase != store.PhasePrepared && !op.Phase.Final() && !confirmNotAdmitted && l.State != store.LeaseQuarantined {
			return usageErr("task %s's relaunch lease protects a prompt that may have been admitted; check the session's transcript, then pass --confirm-not-admitted", taskID)
		}
		now := e.now()
		if op != nil && !op.Phase.Final() {
			op.Phase, op.SettledAt = store.PhaseRejected, now
			if op.Outcome == "" {
				op.Outcome = store.OutcomeOrphaned
			}
			op.Error = "lease broken by an operator"
		}
		if j := st.Job(taskID); j != nil && j.State == store.JobRunning {
			markUncertain(j, j.Generation, "a "+string(l.Kind)+" lease was broken by an operator", now)
		}
		c := *l
		broken = &c
		return st.ReleaseLease(taskID, l.Token)
	})
	return broken, err
}
