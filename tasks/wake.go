package tasks

import (
	"context"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// transcriptTail is how many of a transcript's last messages the wake
// sender reads to learn what agent a session runs as.
const transcriptTail = 50

// orchestratorAgent reads the session's transcript and returns the agent
// its last user message ran as when that is an orchestrator agent, or "".
// It needs no store, so a project that never ran a task gains none from
// the wakes of its other sessions.
func orchestratorAgent(ctx context.Context, cfg Config, s scope, session string) (string, error) {
	hc, err := hostClient(cfg, s)
	if err != nil {
		return "", err
	}
	defer hc.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, cfg.timeouts().Read)
	defer cancel()
	// The end of the transcript is enough: a session whose last user
	// message is further back than that is not one an idle spell of
	// minutes found with work left.
	msgs, err := hc.Messages(rctx, session, transcriptTail)
	switch {
	case isNotFound(err):
		return "", nil // a deleted session is no one's orchestrator
	case err != nil:
		return "", err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i].Info; m.Role == "user" && m.Agent != "" {
			if cfg.isOrchestrator(m.Agent) {
				return m.Agent, nil
			}
			return "", nil
		}
	}
	return "", nil
}

// WakeText is the wake prompt. It is static: the no-progress cap judges
// progress by the host's todo list and the session's other prompts, and a
// prompt that changed would not tell the model anything they do not.
const WakeText = "Finish any incomplete TODOs: go on with the next pending item. " +
	"Where an item waits on a background task, check it with task_status and read its answer with task_result once it has ended; do not start the same work again. " +
	"If everything left needs the user, say what they must do and call wait_for_user."

// Wake sends one wake prompt to an orchestrator session that went idle
// with work left, when the gate allows it (see Gate): it answers "sent
// <message ID>" or the gate's "blocked:<reason>", plus
// "blocked:unmanaged" for a session that does not run as an orchestrator.
//
// Whether a session is an orchestrator, and as which agent it is woken,
// is read from the host each time: the agent its last user message ran
// as, which must be an orchestrator agent. A child's session, or one the
// user switched to another agent, is not woken.
//
// The gate's reservation (the fingerprint counted) comes before the
// prompt, so a host that fails every wake is not stormed. The prompt is
// journalled as sent, in the transaction that checks the reservation
// still stands (no wait armed, no progress since, no other wake in
// flight), before it goes out; it carries its own message ID and an
// internal part, so it never counts as the user's answer to
// wait_for_user. A send that fails, and a gate that could not read the
// host (and so refused, failing closed), are Tool errors, so a caller can
// try again later; a send's outcome is in the journal.
func Wake(ctx context.Context, cfg Config, sc HostScope, session string, enabled bool) (string, error) {
	if session == "" {
		return "", usageErr("a wake names no session")
	}
	s, answer, err := cfg.wakeScope(sc, enabled)
	if err != nil || answer != "" {
		return answer, err
	}
	agent, err := orchestratorAgent(ctx, cfg, s, session)
	switch {
	case err != nil:
		return "", toolErr("the wake sender could not read the transcript of %s (%v); nothing was sent", session, err)
	case agent == "":
		// Nothing is recorded for a session that is not an
		// orchestrator: a project gains no store from its children.
		return "blocked:unmanaged", nil
	}
	e, err := open(cfg, s)
	if err != nil {
		return "", err
	}
	if err := e.update(func(st *store.State) error {
		registerOrchestrator(st, session, agent, e.now())
		return nil
	}); err != nil {
		return "", err
	}
	d, err := e.gate(ctx, session)
	switch {
	case err != nil:
		return "", err
	case d.unread != "":
		return "", toolErr("the wake gate could not read the host (%s) and answered %s; nothing was sent", d.unread, d.answer)
	case d.answer != "allowed":
		return d.answer, nil
	}
	opID, err := store.NewToken()
	if err != nil {
		return "", storeErr(err)
	}
	msgID := opencode.NewMessageID()
	// answer is "" here: a refusal in the transaction below sets it.
	err = e.update(func(st *store.State) error {
		now := e.now()
		// The reservation must still stand: a wait armed since the gate
		// looked, a user message or other progress (which re-arms the
		// cap and drops the reservation), or another sender's gate
		// (which made its own) stops this one; so does another wake
		// still in flight.
		if w := st.Waits[session]; w != nil && w.Status == store.WaitingForUser {
			answer = "blocked:waiting_for_user"
			return nil
		}
		if k := st.Wake[session]; k == nil || !k.LastWakeAt.Equal(d.reservedAt) {
			answer = "blocked:busy"
			return nil
		}
		st.ReapDeadOwners(owner.Alive, now)
		for _, op := range st.Ops {
			if op.Kind == store.OpWake && op.TaskID == session && !op.Phase.Final() && op.Phase != store.PhaseOrphaned {
				answer = "blocked:busy"
				return nil
			}
		}
		if _, err := st.AddOp(store.OpRequest{ID: opID, Kind: store.OpWake, TaskID: session, ClientMessageID: msgID, Owner: e.self, LocalDeadlineAt: now.Add(e.t.Admission)}, now); err != nil {
			return err
		}
		_, err := st.MarkSent(opID, e.self, now)
		return err
	})
	if err != nil || answer != "" {
		return answer, err
	}
	e.crashPoint(CrashSent)
	sctx, cancel := context.WithTimeout(ctx, e.t.Admission)
	sendErr := e.host.PromptAsync(sctx, session, opencode.Prompt{MessageID: msgID, Agent: agent, Parts: []opencode.PromptPart{opencode.InternalPart(WakeText)}})
	cancel()
	e.crashPoint(CrashAnswered)
	if err := e.commitOutcome(func(st *store.State) error {
		phase, outcome := outcomeOf(sendErr)
		msg := ""
		if sendErr != nil {
			msg = "the wake prompt failed: " + sendErr.Error()
		}
		finish(st, opID, phase, outcome, msg, e.now(), false)
		return nil
	}); err != nil {
		return "", err
	}
	switch {
	case sendErr == nil:
		return "sent " + msgID, nil
	case opencode.Authoritative(sendErr):
		return "", toolErr("the wake prompt to %s was refused: %v (its reservation stands: the cap counts it)", session, sendErr)
	}
	return "", toolErr("the wake prompt to %s may not have arrived: %v (its message %s may still show up; its reservation stands: the cap counts it)", session, sendErr, msgID)
}
