package tasks

import (
	"context"
	"errors"
	"fmt"
	"html"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// A run slim started (a launch or a revive) has no tool call in the
// parent waiting for its answer: nothing tells the parent it ended unless
// slim does. So when a pass records such a run as completed or failed, it
// starts a notifier, a detached settler that sends the parent one
// synthetic, internal message saying so:
//
//	<task id="ses_..." state="completed"><summary>label</summary><task_result>…</task_result></task>
//
// The message is marked as internal, so it never counts as the user's
// answer to wait_for_user. Each attempt takes the task's
// terminal-notification lease for the run and its terminal revision,
// and holds it for at most the notify deadline (10 s): a hung host must
// not keep the task from being revived, which is what a lease held until
// the request settles would do. The request may go on after the lease is
// released; its late answer is recorded on its op and, when it is an
// acceptance, on the job only while the job is still that run. Up to
// three attempts are made, a second apart, each re-checking that the run
// is still the one to report; an accepted attempt ends them, as does an
// authoritative refusal. Duplicates are possible (an attempt the host
// accepted after it timed out here); a lost notification is recorded on
// the job, and the board still shows the result.

// maxNotifyAttempts bounds the attempts to notify the parent of one run.
const maxNotifyAttempts = 3

// notifyGap is the pause between two attempts.
const notifyGap = time.Second

// notice names the run whose end a notifier reports.
type notice struct {
	TaskID           string `json:"taskID"`
	Generation       int64  `json:"generation"`
	TerminalRevision int64  `json:"terminalRevision"`
}

// notifyOpArg is the op argument of a notifier's command line: it has no
// op yet, it journals one per attempt.
const notifyOpArg = "notify"

// owesNotice reports whether the job's current run must be reported to
// its parent now: slim started it, it ended with an answer or an error,
// the parent has not seen it, and no attempt is left to make or in
// flight.
func owesNotice(st *store.State, j *store.Job) bool {
	n := j.Notification
	return n.Owed && !n.Sent && n.Attempts < maxNotifyAttempts && j.TerminalUnreconciled &&
		(j.State == store.JobCompleted || j.State == store.JobError) && !notifyInFlight(st, j)
}

// notifyInFlight reports whether a notification of the job's current run
// was sent and has not settled (it may be pending past its lease).
func notifyInFlight(st *store.State, j *store.Job) bool {
	for _, op := range st.Ops {
		if op.Kind == store.OpNotification && op.TaskID == j.TaskID && op.Generation == j.Generation && !op.Phase.Final() {
			return true
		}
	}
	return false
}

// blocksRelaunch reports whether lease l keeps a relaunch of its task
// out: every lease does but a notification's, which the relaunch takes
// over (preemptNotice).
func blocksRelaunch(l *store.Lease) bool { return l != nil && l.Kind != store.LeaseNotification }

// preemptNotice releases the task's terminal-notification lease, if it
// has one, for a relaunch: a parent that starts a new run of the task
// knows the old one ended, so the relaunch must not wait for the
// notification (a hung host would hold it for the whole notify
// deadline). The notifier's request, if it was sent, goes on; its
// outcome is recorded on its op only, since its lease and run are gone.
func preemptNotice(st *store.State, taskID string, now time.Time) {
	l := st.Leases[taskID]
	if l == nil || blocksRelaunch(l) {
		return
	}
	delete(st.Leases, taskID)
	if op := st.Ops[l.OpID]; op != nil && !op.Phase.Final() {
		op.Error = "its lease was released at " + now.Format(time.RFC3339) + " for a relaunch of the task"
	}
}

// startNotifiers starts a notifier for each notice. A notifier that
// cannot be started is not retried: the job keeps its result on the
// board, and the failure is recorded on it.
func (e *engine) startNotifiers(ns []notice) {
	for _, n := range ns {
		h, err := e.startSettler(order{Scope: e.scope(), OpID: notifyOpArg, Foreground: e.self, Notice: &n})
		if err == nil {
			select {
			case <-h.sent:
			case <-time.After(2 * time.Second):
			}
			continue
		}
		e.update(func(st *store.State) error {
			if j := st.Job(n.TaskID); j != nil && j.Generation == n.Generation {
				j.Notification.LastError = "the notifier could not be started: " + err.Error()
			}
			return nil
		})
	}
}

// notify is a notifier's body: the attempts to report one run.
func (e *engine) notify(ctx context.Context, n notice) error {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			time.Sleep(notifyGap)
		}
		a, err := e.claimNotice(n)
		if err != nil || a == nil {
			return err
		}
		retry, err := e.sendNotice(ctx, n, *a)
		if err != nil || !retry {
			return err
		}
	}
}

// noticeAttempt is one claimed attempt: its op and lease, and what to
// send to whom.
type noticeAttempt struct {
	opID, token, parent string
	prompt              opencode.Prompt
}

// claimNotice checks, in one transaction, that the run is still the one
// to report and takes the lease for it, journals the attempt and marks it
// sent (the send rule). It returns nil when there is nothing (more) to
// send: the run was superseded, acknowledged, reported, or out of
// attempts, or another operation holds the task's lease (a revive that
// got in first wins; its run will be reported in turn).
func (e *engine) claimNotice(n notice) (*noticeAttempt, error) {
	var a *noticeAttempt
	err := e.update(func(st *store.State) error {
		now := e.now()
		st.ReapDeadOwners(owner.Alive, now)
		j := st.Job(n.TaskID)
		if j == nil || j.Generation != n.Generation || j.TerminalRevision != n.TerminalRevision || !owesNotice(st, j) || st.Leases[j.TaskID] != nil {
			return nil
		}
		token, err := store.NewToken()
		if err != nil {
			return err
		}
		opID, err := store.NewToken()
		if err != nil {
			return err
		}
		rev := j.TerminalRevision
		if _, err := st.AcquireLease(store.LeaseRequest{TaskID: j.TaskID, Kind: store.LeaseNotification, Token: token, Generation: j.Generation, TerminalRevision: &rev, OpID: opID, Owner: e.self}, now); err != nil {
			return err
		}
		// Its own message ID, as every prompt slim sends has: the
		// parent's transcript then shows which attempts arrived.
		msgID := opencode.NewMessageID()
		if _, err := st.AddOp(store.OpRequest{ID: opID, Kind: store.OpNotification, TaskID: j.TaskID, Generation: j.Generation, LeaseToken: token, ClientMessageID: msgID, Owner: e.self, LocalDeadlineAt: now.Add(e.t.Notify)}, now); err != nil {
			return err
		}
		if _, err := st.MarkSent(opID, e.self, now); err != nil {
			return err
		}
		j.Notification.Attempts++
		j.Notification.LastAttemptAt = now
		p := opencode.Prompt{MessageID: msgID, Parts: []opencode.PromptPart{noticePart(j)}}
		if o := st.Orchestrators[j.ParentSessionID]; o != nil {
			p.Agent = o.Agent
		}
		a = &noticeAttempt{opID: opID, token: token, parent: j.ParentSessionID, prompt: p}
		return nil
	})
	return a, err
}

// noticePart is the message that reports the job's run: its state, label
// and result (the board's summary of it; task_result reads all of it), as
// a synthetic part marked as slim's own.
func noticePart(j *store.Job) opencode.PromptPart {
	state, tag := "completed", "task_result"
	if j.State == store.JobError {
		state, tag = "error", "task_error"
	}
	text := fmt.Sprintf("<task id=\"%s\" state=\"%s\"><summary>%s</summary><%s>%s</%s></task>\n"+
		"Background task %s ended; its full answer: task_result with task_id %s.",
		html.EscapeString(j.TaskID), state, html.EscapeString(j.Description), tag, j.ResultSummary, tag, j.Alias, j.TaskID)
	return opencode.InternalPart(text)
}

// sendNotice sends a claimed attempt. The lease is released when the
// answer comes or the notify deadline passes, whichever is first; a
// request still pending then is waited for (up to the safety cap) to
// record its outcome. It reports whether another attempt may follow.
func (e *engine) sendNotice(ctx context.Context, n notice, a noticeAttempt) (retry bool, err error) {
	e.crashPoint(CrashSent)
	sctx, cancel := context.WithTimeout(ctx, e.t.SafetyCap)
	defer cancel()
	answer := make(chan error, 1)
	go func() { answer <- e.host.PromptAsync(sctx, a.parent, a.prompt) }()
	wait := time.NewTimer(e.t.Notify)
	defer wait.Stop()
	var sendErr error
	late := false
	select {
	case sendErr = <-answer:
	case <-wait.C:
		late = true
		if err := e.commitOutcome(func(st *store.State) error {
			// A relaunch may have taken the lease already: then there
			// is nothing of this attempt's to release.
			_ = st.ReleaseLease(n.TaskID, a.token)
			if p := st.Ops[a.opID]; p != nil && !p.Phase.Final() {
				p.Error = fmt.Sprintf("no answer within %v; the lease was released and the request is still pending", e.t.Notify)
			}
			return nil
		}); err != nil {
			return false, err
		}
		sendErr = <-answer
	}
	e.crashPoint(CrashAnswered)
	if capped(sctx, sendErr) {
		sendErr = fmt.Errorf("no answer within the safety cap of %v", e.t.SafetyCap)
	}
	err = e.commitOutcome(func(st *store.State) error {
		now := e.now()
		phase, outcome := outcomeOf(sendErr)
		msg := ""
		if sendErr != nil {
			msg = "the parent notification failed: " + sendErr.Error()
		} else if late {
			msg = "accepted after the notify deadline"
		}
		finish(st, a.opID, phase, outcome, msg, now, true)
		j := st.Job(n.TaskID)
		current := j != nil && j.Generation == n.Generation && j.TerminalRevision == n.TerminalRevision
		switch {
		case sendErr == nil && current:
			j.Notification.Sent, j.Notification.LastError = true, ""
		case sendErr == nil:
			// Accepted after the task moved on (a revive got in once
			// the lease was released): the successor's records are not
			// this notifier's.
		case current:
			j.Notification.LastError = msg
			retry = !opencode.Authoritative(sendErr) && j.Notification.Attempts < maxNotifyAttempts
		}
		return nil
	})
	return retry, err
}

// errNoticeOrder is the refusal of an order that is a notifier's by its
// op argument and not by its content, or the other way round.
var errNoticeOrder = errors.New("an order names a run to report exactly when its op is " + notifyOpArg)
