package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/store"
)

// settle is the settler's body for one op.
func (e *engine) settle(ctx context.Context, o order, signal func()) error {
	op, refusal, err := e.takeOver(o)
	if err != nil || refusal != "" {
		return err
	}
	e.crashPoint(CrashSent)
	sctx, cancel := context.WithTimeout(ctx, e.t.SafetyCap)
	defer cancel()
	switch op.Kind {
	case store.OpMessage:
		return e.settleMessage(sctx, o, op)
	case store.OpAbort:
		return e.settleAbort(sctx, o, op)
	case store.OpReviveAdmission:
		return e.settleAdmission(sctx, o, op, signal)
	}
	return internalErr(fmt.Errorf("kind %s", op.Kind), "the settler cannot send op %s", op.ID)
}

// takeOver is the settler's first transaction: take the op from the
// tool call, check the records the send depends on, and mark the op
// sent, all at once (the send rule). When a check fails the op is
// rejected as not sent, its lease released, and the refusal recorded as
// the op's error for the tool call to report.
func (e *engine) takeOver(o order) (op store.Op, refusal string, err error) {
	err = e.update(func(st *store.State) error {
		if err := st.HandOffOp(o.OpID, o.Foreground, e.self); err != nil {
			return err
		}
		p := st.Ops[o.OpID]
		now := e.now()
		if refusal = sendCheck(st, p, o); refusal != "" {
			p.Phase, p.Outcome, p.SettledAt, p.Error = store.PhaseRejected, store.OutcomeNotSent, now, refusal
			if l := st.Leases[p.TaskID]; l != nil && l.Token == p.LeaseToken {
				delete(st.Leases, p.TaskID)
			}
			op = *p
			return nil
		}
		sent, err := st.MarkSent(o.OpID, e.self, now)
		if err != nil {
			return err
		}
		op = *sent
		return nil
	})
	return op, refusal, err
}

// sendCheck is the last check before a send, made in the transaction
// that marks the op sent. It returns the refusal, or "".
func sendCheck(st *store.State, op *store.Op, o order) string {
	j := st.Job(op.TaskID)
	verb := map[store.OpKind]string{store.OpMessage: "message", store.OpAbort: "cancel", store.OpReviveAdmission: "revive"}[op.Kind]
	switch {
	case j == nil:
		return fmt.Sprintf("Task %s is no longer tracked; refusing stale %s", o.Name, verb)
	case j.Generation != op.Generation:
		return fmt.Sprintf("Task %s run generation changed; refusing stale %s", o.Name, verb)
	}
	switch op.Kind {
	case store.OpMessage:
		if j.CancellationRequested {
			return fmt.Sprintf("Task %s cannot queue a message: cancellation was requested", o.Name)
		}
		if j.State != store.JobRunning {
			return fmt.Sprintf("Task %s cannot queue a message: board state is %s, not running", o.Name, j.State)
		}
	case store.OpAbort:
		if j.State != store.JobRunning {
			return fmt.Sprintf("stale/uncertain cancellation: task is %s, not running", j.State)
		}
	case store.OpReviveAdmission:
		if !retainedTerminal(j) || !j.LastLiveBusyAt.Equal(o.LastLiveBusyAt) || deletedSince(st, j.TaskID, o) {
			return fmt.Sprintf("Task %s became active again (%s) before the revive prompt was sent; the prompt was NOT sent and no duplicate was launched. Use task_status to inspect it.", o.Name, j.State)
		}
	}
	return ""
}

// deletedSince reports whether the task was dropped or deleted since the
// revive of order o looked at it: its deletion epoch changed. When no
// task at all was dropped since (the scope's epoch counter is where it
// was), it was not, and the archive, which keeps the deletion epochs,
// need not be read.
func deletedSince(st *store.State, taskID string, o order) bool {
	return st.Meta.EpochSeq != o.EpochSeq && st.DeletionEpoch(taskID) != o.Epoch
}

// outcomeOf classifies a send's error for the journal.
func outcomeOf(err error) (store.Phase, store.Outcome) {
	switch {
	case err == nil:
		return store.PhaseSettled, store.OutcomeAccepted
	case opencode.Authoritative(err):
		return store.PhaseRejected, store.OutcomeRejected4xx
	}
	if oe, ok := opencode.AsError(err); ok && oe.Code == "server_error" {
		return store.PhaseSettled, store.OutcomeFailed5xx
	}
	return store.PhaseSettled, store.OutcomeTransport
}

// finish records an op's outcome and releases its lease when the holder
// is still the op's. An op that is already final (an operator broke its
// lease) keeps its record: nothing follows a final phase.
func finish(st *store.State, opID string, phase store.Phase, outcome store.Outcome, msg string, now time.Time, release bool) {
	p := st.Ops[opID]
	if p == nil || p.Phase.Final() {
		return
	}
	p.Phase, p.Outcome, p.Error = phase, outcome, msg
	if phase.Final() {
		p.SettledAt = now
	}
	if release {
		if l := st.Leases[p.TaskID]; l != nil && l.Token == p.LeaseToken {
			delete(st.Leases, p.TaskID)
		}
	}
}

// capped reports whether a send failed without an answer because the
// settler's safety cap passed. The host may still act on the request, so
// its outcome is unknown: the op and its lease are orphaned, never
// recorded as failed.
func capped(ctx context.Context, err error) bool {
	return err != nil && !opencode.Authoritative(err) && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// orphan records that the settler will never learn the op's outcome: the
// op and its lease (while still the op's) are orphaned, for evidence or
// an operator to resolve.
func (e *engine) orphan(st *store.State, opID, why string) {
	p := st.Ops[opID]
	if p == nil || !store.CanAdvance(p.Phase, store.PhaseOrphaned) {
		return
	}
	if why == "" {
		why = fmt.Sprintf("the settler's safety cap of %v passed with the request unsettled; its outcome is unknown", e.t.SafetyCap)
	}
	p.Phase, p.Outcome, p.Error = store.PhaseOrphaned, store.OutcomeOrphaned, why
	if l := st.Leases[p.TaskID]; l != nil && l.Token == p.LeaseToken && l.State == store.LeaseHeld {
		l.State, l.Note = store.LeaseOrphaned, why
	}
}

func (e *engine) settleMessage(ctx context.Context, o order, op store.Op) error {
	err := e.host.SendMessage(ctx, op.TaskID, *o.Prompt)
	e.crashPoint(CrashAnswered)
	lost := capped(ctx, err)
	phase, outcome := outcomeOf(err)
	msg := ""
	if err != nil {
		msg = "Task message transport failed: " + err.Error()
		if !opencode.Authoritative(err) {
			msg += " (the host may have queued it anyway; do not send it again without checking)"
		}
	}
	return e.commitOutcome(func(st *store.State) error {
		if lost {
			e.orphan(st, op.ID, "")
			return nil
		}
		finish(st, op.ID, phase, outcome, msg, e.now(), true)
		return nil
	})
}

// settleAbort sends the abort. A confirmed abort hands the lease back to
// the tool call while it still waits (it verifies the stop and commits
// the cancel); once the tool call has answered, the lease is released
// and the job stays running and uncertain: nothing cancels it without
// the verification.
func (e *engine) settleAbort(ctx context.Context, o order, op store.Op) error {
	ok, err := e.host.Abort(ctx, op.TaskID)
	e.crashPoint(CrashAnswered)
	lost := capped(ctx, err)
	return e.commitOutcome(func(st *store.State) error {
		now := e.now()
		p := st.Ops[op.ID]
		if p == nil {
			return nil
		}
		switch {
		case lost:
			e.orphan(st, op.ID, "")
		case err == nil && (ok || e.v2()):
			// On v2 {"interrupted": false} also means nothing was
			// running: only the idle check that follows decides.
			if !p.CallerAnswered {
				finish(st, op.ID, store.PhaseSettled, store.OutcomeAccepted, "", now, false)
				if l := st.Leases[p.TaskID]; l != nil && l.Token == p.LeaseToken {
					l.Owner = o.Foreground
				}
				return nil
			}
			finish(st, op.ID, store.PhaseSettled, store.OutcomeAccepted, "the abort settled after the caller's deadline", now, true)
		case err == nil:
			finish(st, op.ID, store.PhaseRejected, store.OutcomeRejected4xx, "Session abort was not confirmed: "+op.TaskID, now, true)
		default:
			phase, outcome := outcomeOf(err)
			finish(st, op.ID, phase, outcome, err.Error(), now, true)
		}
		return nil
	})
}

// settleAdmission sends a revive's prompt and registers the new run when
// the host accepts it, however late. An acceptance whose job was deleted
// meanwhile is compensated: one abort, then a check that the session is
// quiet, and only then is the lease released.
func (e *engine) settleAdmission(ctx context.Context, o order, op store.Op, signal func()) error {
	sentAt := op.SentAt
	err := e.host.PromptAsync(ctx, op.TaskID, *o.Prompt)
	e.crashPoint(CrashAnswered)
	unread := false
	if err != nil && !opencode.Authoritative(err) {
		// The outcome is unknown: the host's transcript decides. Its
		// own message there proves the prompt was admitted; a transcript
		// that cannot be read proves nothing, and the op is orphaned.
		// The reads get their own deadline, as the safety cap may have
		// passed, and a few tries, as a host may write the message a
		// moment after it failed to answer.
		found, readErr := e.findMessage(context.WithoutCancel(ctx), op.TaskID, op.ClientMessageID)
		switch {
		case found:
			err = nil
		case readErr != nil:
			unread = true
		}
	}
	lost := capped(ctx, err) || unread
	why := ""
	if unread {
		why = "the prompt's answer was lost and the transcript could not be read; whether it was admitted is unknown"
	}
	compensate := false
	uerr := e.commitOutcome(func(st *store.State) error {
		now := e.now()
		if lost {
			e.orphan(st, op.ID, why)
			return nil
		}
		if err != nil {
			phase, outcome := outcomeOf(err)
			msg := fmt.Sprintf("Task %s revive failed: %v", o.Name, err)
			if !opencode.Authoritative(err) {
				msg += " (the host did not record the prompt; use task_status before reviving it again)"
			}
			finish(st, op.ID, phase, outcome, msg, now, true)
			return nil
		}
		l := st.Leases[op.TaskID]
		valid := l != nil && l.Token == op.LeaseToken && l.State == store.LeaseHeld
		j := st.Job(op.TaskID)
		switch {
		case j == nil && valid:
			finish(st, op.ID, store.PhaseAccepted, store.OutcomeAccepted, "", now, false)
			finish(st, op.ID, store.PhaseCompensating, store.OutcomeAccepted, "admission accepted but invalidated by loss of the record; compensation initiated", now, false)
			compensate = true
		case j != nil && valid && j.Generation == op.Generation:
			relaunch(st, j, o.Baseline, sentAt)
			p := st.Ops[op.ID]
			p.Generation = j.Generation
			finish(st, op.ID, store.PhaseSettled, store.OutcomeAccepted, "", now, true)
		default:
			// The lease was broken or replaced: the successor's records
			// are not this settler's to change.
			finish(st, op.ID, store.PhaseSettled, store.OutcomeAccepted, "admitted after the lease was lost; nothing registered", now, false)
		}
		return nil
	})
	if uerr != nil || !compensate {
		return uerr
	}
	signal()
	// The compensation's abort has no local deadline of the caller's:
	// it gets a fresh safety cap, whatever the prompt's send used up.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.t.SafetyCap)
	defer cancel()
	return e.compensate(cctx, op)
}

// findMessage reads the session's transcript up to three times, a short
// while apart, looking for the message with id: whether it is there, and
// the last read's error when no read succeeded.
func (e *engine) findMessage(ctx context.Context, taskID, id string) (bool, error) {
	var last error
	for try := 0; try < 3; try++ {
		if try > 0 {
			time.Sleep(e.t.Poll)
		}
		rctx, cancel := e.readCtx(ctx)
		msgs, err := e.host.Messages(rctx, taskID, 0)
		cancel()
		if err == nil {
			if opencode.HasID(msgs, id) {
				return true, nil
			}
			last = nil
			continue
		}
		if last == nil && try > 0 {
			continue // an earlier read succeeded: the message is not there
		}
		last = err
	}
	return false, last
}

// msgCompensated is the error of a revive's op whose admission was
// compensated and verified quiet: the op's only record, once settled,
// that it went through compensation.
const msgCompensated = "compensated: aborted and verified quiet"

// compensated reports whether a revive's op went to compensation: it is
// in it, quarantined after it, or settled by it. A caller that reads the
// op only after a fast compensation finished must still report that.
func compensated(op store.Op) bool {
	return op.Phase == store.PhaseCompensating || op.Phase == store.PhaseQuarantined ||
		op.Phase == store.PhaseSettled && op.Error == msgCompensated
}

// compensate aborts an admitted prompt whose job was deleted, with no
// local deadline, then reads the live map once: quiet releases the
// lease; anything else quarantines it for an operator.
func (e *engine) compensate(ctx context.Context, op store.Op) error {
	owned := func(st *store.State) bool {
		l := st.Leases[op.TaskID]
		return l != nil && l.Token == op.LeaseToken && l.State == store.LeaseHeld && st.Job(op.TaskID) == nil
	}
	abortStart := e.now()
	ok, aerr := e.host.Abort(ctx, op.TaskID)
	why := ""
	switch {
	case aerr != nil:
		why = "the abort failed: " + aerr.Error()
	case !ok && !e.v2():
		why = "the abort was not confirmed"
	case e.v2():
		// On v2 an interrupt answered false may mean the run had ended;
		// only the idle check decides.
		if w := e.verifyStoppedV2(ctx, op.TaskID, abortStart); w != "" {
			why = "the session is not known to be quiet: " + w
		}
	default:
		vctx, cancel := context.WithTimeout(ctx, e.t.Verify)
		m, err := e.host.Status(vctx)
		cancel()
		switch {
		case err != nil:
			why = "the status read failed: " + err.Error()
		default:
			if ob := m.Observe(op.TaskID); !ob.Absent {
				why = "the session is not quiet"
				if ob.Known {
					why = "the session is " + string(ob.Live)
				} else if ob.Err != "" {
					why = ob.Err
				}
			}
		}
	}
	return e.update(func(st *store.State) error {
		if !owned(st) {
			return nil
		}
		now := e.now()
		if why == "" {
			finish(st, op.ID, store.PhaseSettled, store.OutcomeAccepted, msgCompensated, now, true)
			return nil
		}
		finish(st, op.ID, store.PhaseQuarantined, store.OutcomeAccepted, "compensation unconfirmed: "+why, now, false)
		l := st.Leases[op.TaskID]
		l.State, l.Note = store.LeaseQuarantined, "compensation unconfirmed: "+why+"; only `slim tasks lease break --task "+op.TaskID+"` releases it"
		return nil
	})
}

// commitOutcome is the settler's commit of an outcome it learned: it is
// retried while the store is busy or failing, up to the safety cap, since
// giving up would leave the op unsettled and its lease orphaned although
// the outcome was known.
func (e *engine) commitOutcome(fn func(*store.State) error) error {
	deadline := time.Now().Add(e.t.SafetyCap)
	for {
		err := e.update(fn)
		se, ok := AsError(err)
		if err == nil || !ok || se.Kind != Store || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
