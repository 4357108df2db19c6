package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// NativeTask is one finished call of the host's own task tool: who called
// it, its arguments and its output.
type NativeTask struct {
	Parent, Agent, Description, Prompt string
	Background                         bool
	Output                             string
}

// parseNativeOutput reads the task ID and state from the host task
// tool's output, in either of its forms:
//
//	<task id="ses_..." state="running">
//	task_id: ses_...  (then)  state: running
//
// and the text between the task_result or task_error tags.
func parseNativeOutput(out string) (id, state, text string) {
	if i := strings.Index(out, `<task id="`); i >= 0 {
		rest := out[i+len(`<task id="`):]
		if j := strings.IndexByte(rest, '"'); j > 0 {
			id = rest[:j]
			if k := strings.Index(rest, `state="`); k >= 0 {
				st := rest[k+len(`state="`):]
				if l := strings.IndexByte(st, '"'); l > 0 {
					state = st[:l]
				}
			}
		}
	} else {
		for _, line := range strings.Split(out, "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "task_id:"); ok && id == "" {
				id = strings.TrimSpace(v)
				if f := strings.Fields(id); len(f) > 0 {
					id = f[0]
				}
			}
			if v, ok := strings.CutPrefix(line, "state:"); ok && state == "" {
				state = strings.TrimSpace(v)
			}
		}
	}
	for _, tag := range []string{"task_result", "task_error"} {
		if a := strings.Index(out, "<"+tag+">"); a >= 0 {
			if b := strings.Index(out[a:], "</"+tag+">"); b >= 0 {
				text = strings.TrimSpace(out[a+len(tag)+2 : a+b])
				break
			}
		}
	}
	if !isSessionID(id) {
		id = ""
	}
	return id, state, text
}

// ObserveNativeTask records what a call of the host's own task tool
// started: a background launch becomes a running job of the caller (a
// resume of a tracked task, its next run), and a foreground run that
// answered at once becomes a finished job whose result the caller has
// already read. Output that names no session is not a launch and is
// ignored.
//
// A run of a task whose ID a lease holds (a revive of slim's, or its
// compensation) is not registered past that lease; the text returned then
// tells the model so, to be appended to the tool's output.
func ObserveNativeTask(ctx context.Context, cfg Config, sc HostScope, nt NativeTask) (string, error) {
	id, state, text := parseNativeOutput(nt.Output)
	switch {
	case id == "" || nt.Parent == "":
		return "", nil
	case state != "running" && state != "completed" && state != "error":
		return "", nil // not a form that says what the run did
	}
	e, err := openScope(cfg, sc)
	if err != nil {
		return "", err
	}
	// A resumed session's new run starts after its last user message:
	// the baseline is the message before it.
	baseline := ""
	if state == "running" {
		rctx, cancel := e.readCtx(ctx)
		msgs, err := e.host.Messages(rctx, id, 0)
		cancel()
		if err == nil {
			for i := len(msgs) - 1; i >= 0; i-- {
				if msgs[i].Info.Role == "user" {
					if i > 0 {
						baseline = msgs[i-1].Info.ID
					}
					break
				}
			}
		}
	}
	note := ""
	err = e.update(func(st *store.State) error {
		note = ""
		now := e.now()
		registerOrchestrator(st, nt.Parent, "", now)
		st.ReapDeadOwners(owner.Alive, now)
		j := st.Job(id)
		if j != nil && j.ParentSessionID != nt.Parent {
			return nil // another parent's session: not this caller's to track
		}
		if state == "running" {
			preemptNotice(st, id, now) // the host started a new run: the old one's end is old news
		}
		if l := st.Leases[id]; l != nil && (j == nil || j.State != store.JobRunning) {
			// A lease owns the ID (a revive or its compensation): a
			// launch must not be registered past it.
			note = untrackedNote(id, l)
			return nil
		}
		if j == nil && st.Tombstone(id) != nil && state != "running" {
			// Output about a deleted task that shows no new run: a late
			// replay, which must not bring the task back.
			return nil
		}
		switch {
		case j == nil:
			j = registerLaunch(st, newJob{TaskID: id, Parent: nt.Parent, Agent: nt.Agent, Description: label(taskArgs{Description: nt.Description, Prompt: nt.Prompt}), Objective: oneLine(nt.Prompt)}, now)
			j.PluginLaunched, j.ExternalOrigin, j.Background = false, true, nt.Background
			j.BaselineMessageID = baseline
			j.Notification.Owed = false // the host's tool output tells the parent
		case state == "running" && j.State != store.JobRunning:
			relaunch(st, j, baseline, now)
			j.Notification.Owed = false
		}
		switch state {
		case "completed":
			markTerminal(j, j.Generation, store.JobCompleted, text, now)
			acknowledge(j, j.Generation, now)
		case "error":
			markTerminal(j, j.Generation, store.JobError, text, now)
			acknowledge(j, j.Generation, now)
		}
		return nil
	})
	return note, err
}

// untrackedNote is what the model is told of a run the task tools do not
// track because the lease l holds its task's ID.
func untrackedNote(id string, l *store.Lease) string {
	why := fmt.Sprintf("a %s lease of slim's holds that task", l.Kind)
	if l.State == store.LeaseQuarantined {
		why = fmt.Sprintf("that task is quarantined (%s)", l.Note)
	}
	return fmt.Sprintf("\n\n[slim] This run of task %s is not tracked by the background task tools: %s. task_status and task_result will not report this run; do not start it again with the same task_id.", id, why)
}
