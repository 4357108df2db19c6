package tasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
)

// An OpenCode v2 host (opencode2, the experimental API under /api) keeps
// no live status map. What stands in for it is the host's wait-for-idle
// call: asked with a timeout of 0 it says whether a session is idle now,
// and with a budget it waits for a stop. This file holds what the tools
// do differently there; the client maps every other call onto the v2
// routes.

// v2 reports whether the engine drives a v2 host.
func (e *engine) v2() bool { return e.flavor == "v2" }

// idleAnswer is what a v2 host's wait-for-idle said about a session.
type idleAnswer int

const (
	idleNow     idleAnswer = iota // the session is idle
	idleBusy                      // still busy when the wait ended
	idleNoRoute                   // the host has no wait-for-idle call
	idleGone                      // the session is deleted
	idleFailed                    // no answer to trust
)

// waitIdle asks the host to wait up to d for the session to be idle. A
// 404 is told apart by reading the session: a session that is there
// means the host has no wait route; one that is not is deleted.
func (e *engine) waitIdle(ctx context.Context, id string, d time.Duration) (idleAnswer, error) {
	grace := min(e.t.Read, time.Second)
	wctx, cancel := context.WithTimeout(ctx, d+grace)
	_, err := e.host.Wait(wctx, id, d)
	localTimeout := errors.Is(wctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	switch {
	case err == nil:
		return idleNow, nil
	case opencode.StillBusy(err), localTimeout && opencode.Timeout(err):
		// A host that ignores the timeout and keeps waiting is as busy
		// as one that answers 408.
		return idleBusy, err
	case isNotFound(err):
		rctx, cancel := e.readCtx(ctx)
		_, gerr := e.host.GetSession(rctx, id)
		cancel()
		switch {
		case gerr == nil:
			return idleNoRoute, err
		case isNotFound(gerr):
			return idleGone, gerr
		}
		return idleFailed, gerr
	}
	return idleFailed, err
}

// v2NoMap is why nothing a v2 host says is a live status.
const v2NoMap = opencode.ErrNoStatusMap

// probeIdle is a v2 snapshot's observation of one session: idle (or
// deleted, which the transcript read that follows finds) counts as a
// valid map's absence; anything else leaves the session uncertain, as a
// v2 host never says a session is running.
func (e *engine) probeIdle(ctx context.Context, id string) liveObs {
	a, err := e.waitIdle(ctx, id, 0)
	switch a {
	case idleNow, idleGone:
		return liveObs{absent: true}
	case idleBusy:
		return liveObs{err: v2NoMap + ", and the session is not idle"}
	case idleNoRoute:
		return liveObs{err: v2NoMap + " and no wait-for-idle call: nothing shows whether the session is running"}
	}
	return liveObs{err: "the idle check failed: " + err.Error()}
}

// snapshotV2 is a snapshot of a host without a map: each session it is
// asked about is probed once. The probes of one snapshot share the status
// deadline, as the one map read they stand in for would: a host whose
// wait ignores its timeout costs a call that deadline, not a second per
// task.
func (e *engine) snapshotV2(ctx context.Context) snapshot {
	pctx, cancel := context.WithTimeout(ctx, e.t.Status)
	return snapshot{at: e.now(), err: v2NoMap, probed: map[string]liveObs{},
		probe: func(id string) liveObs {
			if pctx.Err() != nil {
				cancel()
				return liveObs{err: v2NoMap + ", and the idle checks of this call ran out of time", unprobed: true}
			}
			return e.probeIdle(pctx, id)
		}}
}

// verifyStoppedV2 is the verification of an abort on a v2 host: the
// host's wait for idle within the verification budget, or, on a host
// without that call, a session whose idle time is at or after the abort
// started (polled within the same budget). It returns "" when the
// session stopped, or why it is not known to have.
func (e *engine) verifyStoppedV2(ctx context.Context, taskID string, since time.Time) string {
	a, err := e.waitIdle(ctx, taskID, e.t.Verify)
	switch a {
	case idleNow, idleGone:
		return ""
	case idleBusy:
		return fmt.Sprintf("busy: the host's wait for idle ended after %dms", e.t.Verify.Milliseconds())
	case idleFailed:
		return err.Error()
	}
	deadline := time.Now().Add(e.t.Verify)
	last := "host-info: unreadable"
	for {
		rctx, cancel := e.readCtx(ctx)
		sess, err := e.host.GetSession(rctx, taskID)
		cancel()
		switch {
		case isNotFound(err):
			return ""
		case err != nil:
			last = "host-info: " + err.Error()
		case sess.Time.Idle == 0:
			last = "host-info: the session reports no idle time"
		case sess.Time.Idle >= since.UnixMilli():
			return ""
		default:
			last = fmt.Sprintf("host-info: idle since %s, before the abort at %s",
				time.UnixMilli(sess.Time.Idle).UTC().Format(time.RFC3339Nano), since.UTC().Format(time.RFC3339Nano))
		}
		if time.Until(deadline) <= 0 || !e.pause(ctx, deadline) {
			return last
		}
	}
}

// reviveCapableV2 is a revive's check, before any abort or prompt, that
// a v2 host can show the session idle: without a status map that takes
// its wait-for-idle call.
func (e *engine) reviveCapableV2(ctx context.Context, name, taskID string) error {
	a, err := e.waitIdle(ctx, taskID, 0)
	switch a {
	case idleNoRoute:
		return toolErr("task_revive idle-verification capability unavailable: the host serves OpenCode's v2 API, which has no live status map, and it has no wait-for-idle call (POST /api/session/{id}/wait); no abort or prompt was sent")
	case idleFailed:
		return toolErr("Task %s could not be verified against the host (%v); no abort or prompt was sent. Retry task_revive.", name, err)
	}
	return nil
}

// liveCheckV2 is a revive's last look before its prompt on a v2 host:
// the session must become idle within the status deadline. It returns
// the refusal, or "" to go on.
func (e *engine) liveCheckV2(ctx context.Context, name, taskID string) (string, string) {
	a, err := e.waitIdle(ctx, taskID, e.t.Status)
	switch a {
	case idleNow:
		return "", ""
	case idleBusy:
		return "the session did not become idle", fmt.Sprintf("Task %s: Session idle wait timed out; the revive prompt was NOT sent", name)
	case idleGone:
		return "the session is deleted", fmt.Sprintf("Task %s could not be verified against the host (its session is deleted); the revive prompt was NOT sent.", name)
	}
	return err.Error(), fmt.Sprintf("Task %s could not be verified against the host (%v); the revive prompt was NOT sent. Retry task_revive.", name, err)
}
