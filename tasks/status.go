package tasks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/slimgate/slim/tasks/internal/store"
)

type idArgs struct {
	TaskID    string `json:"task_id"`
	SessionID string `json:"sessionID,omitempty"` // the v2 spelling
}

func (a idArgs) id() string {
	if strings.TrimSpace(a.TaskID) != "" {
		return strings.TrimSpace(a.TaskID)
	}
	return strings.TrimSpace(a.SessionID)
}

// unknownTask is the refusal for a task the parent does not own. A
// session ID gets guidance: the record may have been lost, and launching
// a duplicate is the wrong fix.
func unknownTask(req string) error {
	if isSessionID(req) {
		return toolErr("Unknown task ID or alias: %s. If it is a session this one started whose record was lost, task_result can still read its final answer; do not launch a duplicate.", req)
	}
	return toolErr("Unknown task ID or alias: %s", req)
}

// runStatus is task_status: one bounded look at the live status map,
// folded into the board by the reconciliation pass, then reported. It
// never implies completion from an inconclusive read.
func runStatus(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a idArgs
	if err := decodeArgs("task_status", req.Args, &a); err != nil {
		return nil, err
	}
	parent := req.Context.SessionID
	name := a.id()
	if name == "" {
		return nil, toolErr("task_status requires task_id")
	}
	// One read of the store finds the task and what the observation
	// pass needs; one transaction commits the pass and hands the job back.
	var taskID string
	var g gathered
	if err := e.view(func(st *store.State) error {
		if j := resolve(st, parent, name); j != nil {
			taskID = j.TaskID
			g = gather(st, parent, taskID)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if taskID == "" {
		return nil, unknownTask(name)
	}
	snap := e.snapshot(ctx)
	obsJobs, orphans := e.observeGathered(ctx, g, snap)
	jp, err := e.commit(obsJobs, orphans, snap, taskID)
	if err != nil {
		return nil, err
	}
	if jp == nil {
		return nil, toolErr("Task %s (%s) is no longer tracked: its session was deleted.", name, taskID)
	}
	j := *jp
	obs := snap.observe(taskID)
	res := &Result{Status: "ok", TaskID: j.TaskID, Alias: j.Alias, Generation: j.Generation}
	state := string(j.State)
	if j.State == store.JobReconciled {
		state = string(j.TerminalState)
	}
	uncertain := false
	statusErr := ""
	switch {
	case obs.known():
		state = string(obs.live)
	case obs.absent && isCanonicalTerminal(terminalOf(&j)) && !j.StatusUncertain:
		// A finished run the host is not running: its outcome is known
		// from its transcript (or its verified cancel), so the answer is
		// certain. A stopped run has no such evidence and stays
		// unconfirmed.
		state = string(terminalOf(&j))
	default:
		state += " (unconfirmed)"
		uncertain = true
		switch {
		case obs.absent:
			statusErr = "no live status entry for session"
		default:
			statusErr = obs.err
		}
	}
	last := e.lastActivity(ctx, &j, obs)
	now := e.now()
	idle := max(0, int64(now.Sub(last)/time.Second))
	stuck := obs.known() && now.Sub(last) >= e.t.Stuck
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s (%s)\n", j.Alias, j.TaskID)
	fmt.Fprintf(&b, "state: %s\n", state)
	fmt.Fprintf(&b, "agent: %s\n", j.Agent)
	fmt.Fprintf(&b, "last_activity_at: %s\n", last.UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(&b, "idle_for_seconds: %d\n", idle)
	fmt.Fprintf(&b, "possibly_stuck: %t\n", stuck)
	if uncertain {
		fmt.Fprintf(&b, "status_uncertain: true\n")
		fmt.Fprintf(&b, "last_status_error: %s\n", statusErr)
	}
	res.Text = strings.TrimSuffix(b.String(), "\n")
	res.State, res.StatusUncertain, res.Message = state, uncertain, statusErr
	return res, nil
}

// lastActivity is when the task last showed activity: its newest
// transcript message while it runs (read only then), else the last time
// it was seen busy, else when its run started.
func (e *engine) lastActivity(ctx context.Context, j *store.Job, obs liveObs) time.Time {
	last := j.RunStartedAt
	if j.LastLiveBusyAt.After(last) && !obs.known() {
		last = j.LastLiveBusyAt
	}
	if obs.known() {
		rctx, cancel := e.readCtx(ctx)
		msgs, err := e.host.Messages(rctx, j.TaskID, 1)
		cancel()
		if err == nil && len(msgs) > 0 {
			m := msgs[len(msgs)-1]
			t := max(m.Info.Time.Created, m.Info.Time.Completed)
			if at := time.UnixMilli(t).UTC(); at.After(last) {
				last = at
			}
		}
	}
	return last
}
