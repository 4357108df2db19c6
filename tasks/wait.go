package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/store"
)

// WaitProtocol names the wait_for_user answer's format.
const WaitProtocol = "oh-my-opencode-slim.wait_for_user.v1"

type waitArgs struct {
	Reason string `json:"reason"`
}

// runWaitForUser is wait_for_user: arm the parent's user-wait latch, so
// that nothing wakes the orchestrator until the user writes again.
func runWaitForUser(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a waitArgs
	if err := decodeArgs("wait_for_user", req.Args, &a); err != nil {
		return nil, err
	}
	if err := e.requireOrchestrator("wait_for_user", req); err != nil {
		return nil, err
	}
	reason := oneLine(a.Reason)
	switch {
	case reason == "":
		return nil, toolErr("wait_for_user requires a non-empty reason")
	case utf8.RuneCountInString(reason) > 500:
		return nil, toolErr("wait_for_user: the reason is longer than 500 characters")
	}
	parent := req.Context.SessionID
	// The store is read before the host is asked anything, so that a
	// store that cannot be used fails the call with nothing sent.
	if err := e.view(func(*store.State) error { return nil }); err != nil {
		return nil, err
	}
	// The baseline: the user message the wait follows. Seeing it again
	// must not clear the wait. A failed read arms the wait without one.
	rctx, cancel := e.readCtx(ctx)
	msgs, err := e.host.Messages(rctx, parent, 0)
	cancel()
	baseline := ""
	if err == nil {
		baseline = opencode.LastUserID(msgs)
	}
	err = e.update(func(st *store.State) error {
		w := st.Waits[parent]
		if w == nil {
			w = &store.Wait{}
			st.Waits[parent] = w
		}
		registerOrchestrator(st, parent, req.Context.Agent, e.now())
		w.Status, w.ArmedAt, w.Reason = store.WaitingForUser, e.now(), reason
		w.BaselineUserMessageID = baseline
		// The last user message seen, from the hook or the transcript,
		// must not clear the wait it came before.
		if baseline > w.LastRearmIdentity {
			w.LastRearmIdentity = baseline
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Result{Status: "waiting_for_user", State: "waiting_for_user",
		Text: fmt.Sprintf("state: waiting_for_user\nprotocol: %s\nreason: %s\n\nEnd this turn now. Do not call more tools until the user responds.", WaitProtocol, reason)}, nil
}

// Event is a host event the plugin forwards.
type Event struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	MessageID string `json:"messageID,omitempty"`
	// Agent is the agent of a chat message.
	Agent string `json:"agent,omitempty"`
	// Status is a session.status event's status type (busy, retry, idle).
	Status string `json:"status,omitempty"`
	// External reports, for a chat message, that the plugin saw a real
	// user message (text, file or image parts, none internal).
	External *bool `json:"external,omitempty"`
	// Parts are a chat message's parts, for slim to judge when External
	// is not given.
	Parts []opencode.Part `json:"parts,omitempty"`
	// Fallback marks a deletion that is the host's fallback teardown,
	// which must not clear a wait.
	Fallback bool `json:"fallback,omitempty"`
}

// Observe applies one host event to the scope: deletions drop jobs (a
// deleted parent clears its board and its wait), busy status confirms a
// running job, and a real user message clears the parent's wait (and a
// chat message from an orchestrator agent makes its session managed).
func Observe(ctx context.Context, cfg Config, sc HostScope, ev Event) error {
	e, err := openScope(cfg, sc)
	if err != nil {
		return err
	}
	id := ev.SessionID
	if id == "" {
		return usageErr("the event names no session")
	}
	return e.update(func(st *store.State) error {
		now := e.now()
		switch ev.Type {
		case "session.deleted":
			if ev.Fallback {
				if j := st.Job(id); j != nil {
					drop(st, id, "session deleted", now)
				}
				return nil
			}
			if st.Job(id) != nil {
				drop(st, id, "session deleted", now)
			}
			clearParent(st, id, now)
		case "session.status":
			if j := st.Job(id); j != nil && (ev.Status == "busy" || ev.Status == "retry" || ev.Status == "image_processing") {
				markLiveBusy(j, j.Generation, now)
			}
		case "session.idle":
			// The parent consumed what it was shown: acknowledge it.
			for _, in := range st.Injections[id] {
				if j := st.Job(in.TaskID); j != nil {
					acknowledge(j, in.Generation, now)
				}
			}
			delete(st.Injections, id)
		case "chat.message":
			if ev.Agent != "" && cfg.isOrchestrator(ev.Agent) {
				registerOrchestrator(st, id, ev.Agent, now)
			}
			external := false
			if ev.External != nil {
				external = *ev.External
			} else if len(ev.Parts) > 0 {
				external = opencode.ExternalUser(opencode.Message{Info: opencode.MessageInfo{Role: "user"}, Parts: ev.Parts})
			}
			if external && ev.MessageID != "" {
				clearWaitFor(st, id, ev.MessageID)
				// A real user message also re-arms the wake cap.
				delete(st.Wake, id)
			} else if ev.MessageID != "" && st.Wake[id] != nil && !wakeMessage(st, id, ev.MessageID) {
				// A prompt that is not one of the wakes (a notification,
				// another tool's) is progress the wakes did not make: it
				// re-arms the cap. The wakes' own messages do not, however
				// late their events come.
				delete(st.Wake, id)
			}
		default:
			return usageErr("unknown event type %q", ev.Type)
		}
		return nil
	})
}

// ObserveTracked is Observe for the hook: it does nothing when the
// scope has no store yet, so a project that never ran a task gains no
// state from its events, and its events cost one stat.
func ObserveTracked(ctx context.Context, cfg Config, sc HostScope, ev Event) error {
	dir := store.ScopeDir(cfg.StateDir, sc.Directory, strings.TrimRight(sc.ServerURL, "/"))
	if _, err := os.Lstat(filepath.Join(dir, store.DocumentName)); err != nil {
		return nil
	}
	return Observe(ctx, cfg, sc, ev)
}

// wakeMessage reports whether messageID is the message of a wake sent to
// session.
func wakeMessage(st *store.State, session, messageID string) bool {
	for _, op := range st.Ops {
		if op.Kind == store.OpWake && op.TaskID == session && op.ClientMessageID == messageID {
			return true
		}
	}
	return false
}

// HostScope names a scope without a tool request: a directory and a
// server.
type HostScope struct {
	Directory, ServerURL, Flavor string
}

// clearWaitFor clears the parent's wait for a real user message, unless
// it is the message the wait was armed after (a re-delivery). The message
// becomes the rearm identity either way.
func clearWaitFor(st *store.State, parent, messageID string) bool {
	w := st.Waits[parent]
	if w == nil {
		st.Waits[parent] = &store.Wait{Status: store.WaitCleared, LastRearmIdentity: messageID}
		return false
	}
	if w.LastRearmIdentity == messageID || (w.BaselineUserMessageID != "" && messageID <= w.BaselineUserMessageID) {
		return false
	}
	w.LastRearmIdentity = messageID
	cleared := w.Status == store.WaitingForUser
	w.Status = store.WaitCleared
	return cleared
}

// awaitsInput reports whether session waits on its user for an answer
// the host knows of: a question its question tool asked or a permission
// a tool call needs, both still pending. The host's lists are read, not
// events, so an answer the hook never forwarded cannot leave the gate
// shut. A list that cannot be read counts as a wait (fail closed), and
// unread says why.
func (e *engine) awaitsInput(ctx context.Context, session string) (waits bool, unread string) {
	for _, list := range []func(context.Context) ([]opencode.Pending, error){e.host.Questions, e.host.Permissions} {
		rctx, cancel := e.readCtx(ctx)
		pending, err := list(rctx)
		cancel()
		if err != nil {
			return true, err.Error()
		}
		for _, p := range pending {
			if p.SessionID == session {
				return true, ""
			}
		}
	}
	return false, ""
}

// Gate answers whether a wake prompt may be sent to session now:
// "allowed", or "blocked:<reason>".
func Gate(ctx context.Context, cfg Config, sc HostScope, session string, wakesEnabled bool) (string, error) {
	s, answer, err := cfg.wakeScope(sc, wakesEnabled)
	if err != nil || answer != "" {
		return answer, err
	}
	e, err := open(cfg, s)
	if err != nil {
		return "", err
	}
	d, err := e.gate(ctx, session)
	return d.answer, err
}

// wakeScope is the scope of a wake gate or sender, or the answer that
// ends it before anything is read: wakes are off, or the host is v2,
// which gets no wakes.
func (c *Config) wakeScope(sc HostScope, enabled bool) (scope, string, error) {
	s, err := c.hostScope(sc)
	switch {
	case err != nil:
		return s, "", err
	case !enabled:
		return s, "blocked:disabled", nil
	case s.Flavor == "v2":
		return s, "blocked:unsupported_host", nil
	}
	return s, "", nil
}

// gateDecision is what the gate decided: its answer; when it allowed a
// wake, the time of the reservation it made; when it refused because the
// host could not be read (failing closed), why.
type gateDecision struct {
	answer     string
	reservedAt time.Time
	unread     string
}

func blocked(reason, unread string) gateDecision {
	return gateDecision{answer: "blocked:" + reason, unread: unread}
}

// gate is Gate for an open engine.
func (e *engine) gate(ctx context.Context, session string) (gateDecision, error) {
	var w store.Wait
	var wake store.Wake
	if err := e.view(func(st *store.State) error {
		if p := st.Waits[session]; p != nil {
			w = *p
		}
		if p := st.Wake[session]; p != nil {
			wake = *p
		}
		return nil
	}); err != nil {
		return gateDecision{}, err
	}
	if w.Status == store.WaitingForUser {
		// Without a hook feed, the transcript is the fallback: a real
		// user message newer than the wait's baseline clears it.
		rctx, cancel := e.readCtx(ctx)
		msgs, err := e.host.Messages(rctx, session, 0)
		cancel()
		cleared := false
		if err == nil {
			for _, m := range msgs {
				// Newer than the wait by its ID and by its time: a wait
				// armed without a baseline (its read failed) is cleared
				// only by a message written after it was armed.
				newer := m.Info.ID > w.BaselineUserMessageID && m.Info.Time.Created >= w.ArmedAt.UnixMilli()
				if opencode.ExternalUser(m) && newer && m.Info.ID != w.LastRearmIdentity {
					id := m.Info.ID
					if uerr := e.update(func(st *store.State) error {
						cleared = clearWaitFor(st, session, id) || cleared
						return nil
					}); uerr != nil {
						return gateDecision{}, uerr
					}
				}
			}
		}
		if !cleared {
			unread := ""
			if err != nil {
				unread = "the parent's transcript: " + err.Error()
			}
			return blocked("waiting_for_user", unread), nil
		}
	}
	if waits, unread := e.awaitsInput(ctx, session); waits {
		return blocked("input_wait", unread), nil
	}
	snap := e.snapshot(ctx)
	switch ob := snap.observe(session); {
	case ob.known():
		return blocked("busy", ""), nil
	case !ob.absent:
		return blocked("busy", "the parent's live status: "+ob.err), nil // unknown parent state fails closed
	}
	rctx, cancel := e.readCtx(ctx)
	todos, err := e.host.Todos(rctx, session)
	cancel()
	if err != nil {
		return blocked("no_incomplete_todos", "the parent's todos: "+err.Error()), nil
	}
	var fp strings.Builder
	incomplete := false
	for _, t := range todos {
		switch t.Status {
		case "pending", "in_progress":
			incomplete = true
		case "completed", "cancelled":
		default:
			return blocked("no_incomplete_todos", ""), nil // a status it cannot read fails closed
		}
		fp.WriteString(t.ID + "=" + t.Status + ";")
	}
	if !incomplete {
		return blocked("no_incomplete_todos", ""), nil
	}
	if wake.LastFingerprint == fp.String() && wake.UnchangedWakeCount >= 2 {
		return blocked("cap_reached", ""), nil
	}
	// The reservation: the fingerprint is counted before the wake is
	// sent, so a failing prompt cannot storm. The wait and the cap are
	// checked again in the same transaction, so two gates at once, or a
	// wait armed meanwhile, cannot both pass.
	d := gateDecision{answer: "allowed"}
	err = e.update(func(st *store.State) error {
		if w := st.Waits[session]; w != nil && w.Status == store.WaitingForUser {
			d = blocked("waiting_for_user", "")
			return nil
		}
		k := st.Wake[session]
		if k != nil && k.LastFingerprint == fp.String() && k.UnchangedWakeCount >= 2 {
			d = blocked("cap_reached", "")
			return nil
		}
		if k == nil {
			k = &store.Wake{}
			st.Wake[session] = k
		}
		if k.LastFingerprint == fp.String() {
			k.UnchangedWakeCount++
		} else {
			k.LastFingerprint, k.UnchangedWakeCount = fp.String(), 1
		}
		k.LastWakeAt = e.now()
		d.reservedAt = k.LastWakeAt
		return nil
	})
	return d, err
}
