package tasks

import (
	"iter"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slimgate/slim/tasks/internal/store"
)

// This file holds the job lifecycle: every change a tool or an
// observation makes to a job, each fenced by the generation it was taken
// under, so a late or stale observation never changes a newer run.

// maxSummary bounds, in characters, the result summary a job keeps.
const maxSummary = 2000

// stoppedSummary is the result a job gets when its run ended without a
// terminal answer.
const stoppedSummary = "Background session stopped before a terminal task result was received."

// aliasPrefixes are the short names of the known specialists.
func aliasPrefix(agent string) string {
	switch agent {
	case "council":
		return "cou"
	case "designer":
		return "des"
	case "explorer":
		return "exp"
	case "fixer":
		return "fix"
	case "librarian":
		return "lib"
	case "observer":
		return "obs"
	case "oracle":
		return "ora"
	case "":
		return "job"
	}
	r := []rune(agent)
	if len(r) > 3 {
		r = r[:3]
	}
	return strings.ToLower(string(r))
}

// resolve finds the parent's job named by req (a task ID or an alias,
// trimmed). Another parent's job is never found. A running task is found
// without reading the archive: by ID in the live document, and by alias
// among the live jobs, which are walked first.
func resolve(st *store.State, parent, req string) *store.Job {
	req = strings.TrimSpace(req)
	if req == "" {
		return nil
	}
	byAlias := func(jobs iter.Seq[*store.Job]) *store.Job {
		for j := range jobs {
			if j.ParentSessionID == parent && j.Alias == req {
				return j
			}
		}
		return nil
	}
	j := st.Live[req]
	if j == nil {
		if j = byAlias(maps.Values(st.Live)); j != nil {
			return j
		}
		j = st.Job(req)
	}
	if j != nil {
		if j.ParentSessionID == parent {
			return j
		}
		return nil
	}
	return byAlias(st.Jobs())
}

// jobsOf returns the parent's jobs, oldest launch first, archived ones
// included.
func jobsOf(st *store.State, parent string) []*store.Job {
	return sortJobs(st.Jobs(), parent)
}

// liveJobsOf is jobsOf without the archived jobs, which are settled: for
// a caller that looks only at jobs that are not (running ones, unread
// results), so that it never reads the archive.
func liveJobsOf(st *store.State, parent string) []*store.Job {
	return sortJobs(maps.Values(st.Live), parent)
}

// sortJobs returns the jobs of parent in jobs, oldest launch first.
func sortJobs(jobs iter.Seq[*store.Job], parent string) []*store.Job {
	var out []*store.Job
	for j := range jobs {
		if j.ParentSessionID == parent {
			out = append(out, j)
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].LaunchedAt.Equal(out[b].LaunchedAt) {
			return out[a].LaunchedAt.Before(out[b].LaunchedAt)
		}
		return out[a].TaskID < out[b].TaskID
	})
	return out
}

// newJob is what a launch knows of the job it registers.
type newJob struct {
	TaskID, Parent, Agent, Description, Objective string
}

// registerLaunch records a new running job with the next generation and
// the next alias of its parent and agent. A tombstone of the ID no longer
// counts once it has a job (see store.State.Tombstone): a launch proves
// the ID is live again.
func registerLaunch(st *store.State, n newJob, now time.Time) *store.Job {
	prefix := aliasPrefix(n.Agent)
	j := &store.Job{
		TaskID:          n.TaskID,
		ParentSessionID: n.Parent,
		Agent:           n.Agent,
		Description:     n.Description,
		Objective:       n.Objective,
		Alias:           prefix + "-" + strconv.FormatInt(st.NextAliasNumber(n.Parent, prefix), 10),
		State:           store.JobRunning,
		Generation:      st.NextGeneration(),
		TaskGeneration:  1,
		Background:      true,
		PluginLaunched:  true,
		// Nothing but slim tells the parent when this run ends.
		Notification:   store.Notification{Owed: true},
		LaunchedAt:     now,
		LastLaunchedAt: now,
		RunStartedAt:   now,
		UpdatedAt:      now,
	}
	st.Live[j.TaskID] = j
	retain(st, now)
	return j
}

// MaxRetainedJobs bounds the finished jobs a scope keeps. Without a
// bound the document would grow with every task ever run until it passed
// the store's size limit and every call failed closed; and every call
// pays for the size of the document.
const MaxRetainedJobs = 200

// retain evicts the oldest finished jobs beyond MaxRetainedJobs: only
// acknowledged ones with a certain outcome and no lease, oldest finish
// first. An evicted job leaves a tombstone with its last result, as a
// deletion does; it is then unknown to the tools, like a deleted task.
func retain(st *store.State, now time.Time) {
	// Every archived job is settled: the count tells whether any must go
	// without reading the archive.
	live := 0
	for _, j := range st.Live {
		if st.Settled(j) {
			live++
		}
	}
	if live+st.ArchivedJobs() <= MaxRetainedJobs {
		return
	}
	var done []*store.Job
	for j := range st.Jobs() {
		if st.Settled(j) {
			done = append(done, j)
		}
	}
	if len(done) <= MaxRetainedJobs {
		return
	}
	sort.Slice(done, func(a, b int) bool {
		ta, tb := finishedAt(done[a]), finishedAt(done[b])
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return done[a].TaskID < done[b].TaskID
	})
	for _, j := range done[:len(done)-MaxRetainedJobs] {
		drop(st, j.TaskID, "evicted: more than the retained finished jobs", now)
	}
}

// finishedAt is when a finished job was last of use: read or finished.
func finishedAt(j *store.Job) time.Time {
	if j.LastUsedAt.After(j.CompletedAt) {
		return j.LastUsedAt
	}
	return j.CompletedAt
}

// relaunch starts the job's next run: a new generation, running, with
// everything the last run left cleared.
func relaunch(st *store.State, j *store.Job, baseline string, now time.Time) {
	j.Generation = st.NextGeneration()
	j.TaskGeneration++
	j.State = store.JobRunning
	j.TerminalState = ""
	j.TerminalUnreconciled = false
	j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
	j.CancellationRequested = false
	j.TimedOut, j.RecoverableAfterLiveBusy = false, false
	j.CompletedAt, j.StopConfirmationStartedAt = time.Time{}, time.Time{}
	j.ResultSummary = ""
	j.TerminalRevision = 0
	j.BaselineMessageID = baseline
	// A run slim starts owes the parent a notification of its end; the
	// caller that registers a native run clears it.
	j.Notification = store.Notification{Owed: true}
	j.LastLaunchedAt, j.RunStartedAt, j.UpdatedAt, j.LastUsedAt = now, now, now, now
}

// terminalOf returns the job's outcome: its state, or for a reconciled
// job the outcome it kept.
func terminalOf(j *store.Job) store.JobState {
	if j.State == store.JobReconciled {
		return j.TerminalState
	}
	return j.State
}

func isCanonicalTerminal(s store.JobState) bool {
	return s == store.JobCompleted || s == store.JobError || s == store.JobCancelled
}

// markUncertain records that the live status could not be confirmed.
// It never changes the state: uncertainty is never completion.
func markUncertain(j *store.Job, gen int64, msg string, now time.Time) {
	if j.Generation != gen {
		return
	}
	if !j.StatusUncertain {
		j.StatusUncertainSince = now
	}
	j.StatusUncertain, j.LastStatusError, j.UpdatedAt = true, msg, now
}

// markLiveBusy applies a busy or retry observation. A running job is
// confirmed (and its stop candidacy ends); an unacknowledged stopped job
// whose stop is older than the observation runs again in the same
// generation; any other job only remembers the time, because late busy
// never resurrects a finished run.
func markLiveBusy(j *store.Job, gen int64, at time.Time) {
	if j.Generation != gen {
		return
	}
	if at.After(j.LastLiveBusyAt) {
		j.LastLiveBusyAt = at
	}
	switch {
	case j.State == store.JobRunning:
		j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
		j.StopConfirmationStartedAt = time.Time{}
		j.UpdatedAt = at
	case j.State == store.JobStopped && j.TerminalUnreconciled && j.DeadlineExceededAt.IsZero() && at.After(j.CompletedAt):
		j.State = store.JobRunning
		j.TerminalUnreconciled = false
		j.CompletedAt = time.Time{}
		j.ResultSummary = ""
		j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
		j.StopConfirmationStartedAt = time.Time{}
		j.UpdatedAt = at
	}
}

// markNotBusy applies an observation that the session has no live entry
// in a valid map. The first marks the job a stop candidate (uncertain);
// one at least grace later, with no busy seen in between, stops it. A
// confirmed stop is a certain observation, so it clears the uncertainty:
// a stopped session may be revived.
func markNotBusy(j *store.Job, gen int64, at time.Time, grace time.Duration) {
	if j.Generation != gen || j.State != store.JobRunning || !j.DeadlineExceededAt.IsZero() {
		return
	}
	start := j.StopConfirmationStartedAt
	if start.IsZero() || !j.LastLiveBusyAt.Before(start) {
		j.StopConfirmationStartedAt = at
		markUncertain(j, gen, "no live status entry for session", at)
		return
	}
	if at.Sub(start) < grace {
		markUncertain(j, gen, "no live status entry for session", at)
		return
	}
	j.State = store.JobStopped
	j.TerminalUnreconciled = true
	j.CompletedAt = at
	j.ResultSummary = stoppedSummary
	j.TerminalRevision++
	j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
	j.UpdatedAt = at
}

// markTerminal records a run's terminal answer (completed or error),
// found in the transcript. It applies only to the same generation's
// running (or unacknowledged stopped) job.
func markTerminal(j *store.Job, gen int64, state store.JobState, summary string, at time.Time) {
	if j.Generation != gen {
		return
	}
	if j.State != store.JobRunning && !(j.State == store.JobStopped && j.TerminalUnreconciled) {
		return
	}
	j.State = state
	j.TerminalUnreconciled = true
	j.CompletedAt = at
	// The summary is for the board and the tombstone; task_result reads
	// the full answer from the transcript. Kept short, the document stays
	// small however long the answers are.
	j.ResultSummary = cut(summary, maxSummary)
	j.TerminalRevision++
	j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
	j.StopConfirmationStartedAt = time.Time{}
	if state == store.JobError {
		j.TotalErrors++
		j.LastErrorAt = at
		j.LastStatusError = j.ResultSummary
	} else {
		j.TimeoutCount = 0
	}
	j.UpdatedAt = at
}

// markCancelled records a verified cancel of the job's run.
func markCancelled(j *store.Job, gen int64, reason string, at time.Time) bool {
	if j.Generation != gen {
		return false
	}
	j.State = store.JobCancelled
	j.CancellationRequested = true
	j.TerminalUnreconciled = true
	j.CompletedAt = at
	j.ResultSummary = "cancelled"
	if reason != "" {
		j.ResultSummary += ": " + reason
	}
	j.TerminalRevision++
	j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
	j.StopConfirmationStartedAt = time.Time{}
	j.UpdatedAt = at
	return true
}

// markUsed records that the parent used the job's result.
func markUsed(j *store.Job, at time.Time) { j.LastUsedAt = at }

// acknowledge records that the parent has seen the job's terminal
// result: a terminal job becomes reconciled (keeping its outcome), a
// stopped one stays stopped but leaves the unacknowledged list.
func acknowledge(j *store.Job, gen int64, at time.Time) {
	if j.Generation != gen || !j.TerminalUnreconciled {
		return
	}
	j.TerminalUnreconciled = false
	j.LastUsedAt = at
	if isCanonicalTerminal(j.State) {
		j.TerminalState = j.State
		j.State = store.JobReconciled
		if j.DeadlineExceededAt.IsZero() {
			j.StatusUncertain, j.StatusUncertainSince, j.LastStatusError = false, time.Time{}, ""
		}
	}
	j.UpdatedAt = at
}

// drop deletes a job and records its tombstone and deletion epoch, in
// the archive. The job's lease, if any, stays: only its holder may
// release it.
func drop(st *store.State, taskID, reason string, at time.Time) {
	a := st.Archive()
	epoch := st.NextEpoch()
	a.DeletionEpochs[taskID] = epoch
	t := &store.Tombstone{Epoch: epoch, At: at, Reason: reason}
	if j := st.Job(taskID); j != nil {
		if s := terminalOf(j); isCanonicalTerminal(s) || s == store.JobStopped {
			t.LastTerminal = &store.LastTerminal{State: s, Summary: cut(j.ResultSummary, maxTombstoneSummary)}
		}
	}
	a.Tombstones[taskID] = t
	st.DeleteJob(taskID)
	if len(a.Tombstones) > maxTombstones {
		// The oldest tombstones go first: a replay of output that old is
		// not going to come. A bound keeps the archive, which every
		// deletion rewrites, from growing with every task ever deleted.
		ids := make([]string, 0, len(a.Tombstones))
		for id := range a.Tombstones {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(x, y int) bool { return a.Tombstones[ids[x]].Epoch < a.Tombstones[ids[y]].Epoch })
		for _, id := range ids[:len(ids)-maxTombstones] {
			delete(a.Tombstones, id)
			delete(a.DeletionEpochs, id)
		}
	}
}

// Bounds of the tombstones: how many are kept, and how much of the last
// result each keeps.
const (
	maxTombstones       = 5000
	maxTombstoneSummary = 300
)

// clearParent drops every job of a deleted parent, and its wait.
func clearParent(st *store.State, parent string, at time.Time) {
	for _, j := range jobsOf(st, parent) {
		drop(st, j.TaskID, "parent deleted", at)
	}
	delete(st.Waits, parent)
	delete(st.Wake, parent)
	delete(st.Injections, parent)
	delete(st.Orchestrators, parent)
}

// reusable reports whether a native task(task_id=...) may resume the job:
// acknowledged, with a terminal outcome, certain, of the same agent, and
// within the context budget.
func reusable(j *store.Job, agent string) bool {
	if j.Agent != agent || j.StatusUncertain || j.TerminalUnreconciled {
		return false
	}
	switch j.State {
	case store.JobReconciled, store.JobStopped:
	default:
		return false
	}
	lines := 0
	for _, f := range j.ContextFiles {
		lines += f.LineCount
	}
	return lines <= 50000
}

// retainedTerminal reports whether task_revive may relaunch the job
// without cancelling it first: a terminal, stopped or reconciled run
// whose status is certain.
func retainedTerminal(j *store.Job) bool {
	if j.StatusUncertain {
		return false
	}
	switch j.State {
	case store.JobCompleted, store.JobError, store.JobCancelled, store.JobStopped:
		return true
	case store.JobReconciled:
		return j.TerminalState != ""
	}
	return false
}
