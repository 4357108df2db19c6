package tasks

import (
	"fmt"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// leaseNote explains why a task's lease is not available: nothing when
// a live operation holds it (the refusal says enough), and for an
// orphaned or quarantined lease who held it and how an operator frees
// it, because nothing frees it by itself.
func leaseNote(st *store.State, taskID string) string {
	l := st.Leases[taskID]
	if l == nil || l.State == store.LeaseHeld {
		return ""
	}
	return fmt.Sprintf(" (the %s lease is %s: %s; an operator can inspect it with `slim tasks lease inspect` and free it with `slim tasks lease break --task %s`)", l.Kind, l.State, l.Note, taskID)
}

// captured is what a capture transaction took: the lease and the op.
type captured struct {
	job   store.Job
	lease store.LeaseRef
	opID  string
}

// capture takes a lease of kind for the job's current generation and
// journals an op of opKind owned by this process, in the caller's
// transaction. It returns the refusal of AcquireLease as is.
//
// It first settles what dead owners left behind, as every caller that
// wants a lease must: a lease whose op was never sent is released, and
// one whose op may have been admitted becomes orphaned, so the refusal
// names it and the operator command instead of a live holder.
func (e *engine) capture(st *store.State, j *store.Job, kind store.LeaseKind, opKind store.OpKind, clientMsg string, deadline time.Duration) (*captured, error) {
	st.ReapDeadOwners(owner.Alive, e.now())
	token, err := store.NewToken()
	if err != nil {
		return nil, err
	}
	opID, err := store.NewToken()
	if err != nil {
		return nil, err
	}
	now := e.now()
	if kind == store.LeaseRelaunch {
		preemptNotice(st, j.TaskID, now)
	}
	l, err := st.AcquireLease(store.LeaseRequest{TaskID: j.TaskID, Kind: kind, Token: token, Generation: j.Generation, OpID: opID, Owner: e.self}, now)
	if err != nil {
		return nil, err
	}
	if _, err := st.AddOp(store.OpRequest{
		ID: opID, Kind: opKind, TaskID: j.TaskID, Generation: j.Generation, LeaseToken: token,
		ClientMessageID: clientMsg, Owner: e.self, LocalDeadlineAt: now.Add(deadline),
	}, now); err != nil {
		return nil, err
	}
	return &captured{job: *j, lease: l.Ref(), opID: opID}, nil
}

// abandon rejects a captured op that was never sent and releases its
// lease: a pre-send failure.
func (e *engine) abandon(c *captured, why string) error {
	return e.update(func(st *store.State) error {
		if p := st.Ops[c.opID]; p != nil && p.Phase == store.PhasePrepared {
			p.Phase, p.Outcome, p.SettledAt, p.Error = store.PhaseRejected, store.OutcomeNotSent, e.now(), why
		}
		if l := st.Leases[c.job.TaskID]; l != nil && l.Token == c.lease.Token {
			delete(st.Leases, c.job.TaskID)
		}
		return nil
	})
}

// requireOrchestrator refuses a call from an agent that does not own
// background tasks, or from a session that is not an orchestrator's. A
// session is managed when it launched a task through slim or when the
// call names an orchestrator agent; a call that names no agent must come
// from a managed session.
func (e *engine) requireOrchestrator(tool string, req Request) error {
	if !e.cfg.isOrchestrator(req.Context.Agent) {
		return toolErr("%s can only be used by orchestrator", tool)
	}
	if req.Context.Agent != "" {
		return nil
	}
	managed := false
	if err := e.view(func(st *store.State) error {
		managed = st.Orchestrators[req.Context.SessionID] != nil
		return nil
	}); err != nil {
		return err
	}
	if !managed {
		return toolErr("%s can only be used in orchestrator sessions", tool)
	}
	return nil
}

// registerOrchestrator records the session as managed and, when the call
// names it, the orchestrator agent it runs as (what a notification slim
// sends to it runs as).
func registerOrchestrator(st *store.State, session, agent string, now time.Time) {
	o := st.Orchestrators[session]
	if o == nil {
		o = &store.Orchestrator{FirstSeenAt: now}
		st.Orchestrators[session] = o
	}
	if agent != "" {
		o.Agent = agent
	}
}
