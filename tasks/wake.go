package tasks

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/tasks/internal/opencode"
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
	hc, err := opencode.New(opencode.Config{BaseURL: s.ServerURL, Directory: s.Directory, Username: cfg.Username, Password: cfg.Password})
	if err != nil {
		return "", usageErr("%v", err)
	}
	defer hc.CloseIdleConnections()
	t := cfg.Timeouts
	if t == (Timeouts{}) {
		t = DefaultTimeouts()
	}
	rctx, cancel := context.WithTimeout(ctx, t.Read)
	defer cancel()
	// The end of the transcript is enough: a session whose last user
	// message is further back than that is not one an idle spell of
	// minutes found with work left.
	msgs, err := hc.Messages(rctx, session, transcriptTail)
	if err != nil {
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
// progress by the host's todo list alone, and a prompt that changed
// would not tell the model anything the list does not.
const WakeText = "Finish any incomplete TODOs: go on with the next pending item. " +
	"Where an item waits on a background task, check it with task_status and read its answer with task_result once it has ended; do not start the same work again. " +
	"If everything left needs the user, say what they must do and call wait_for_user."

// Wake sends one wake prompt to an orchestrator session that went idle
// with work left, when the gate allows it (see Gate): it answers "sent
// <message ID>" or the gate's "blocked:<reason>", plus
// "blocked:unmanaged" for a session that is not a managed orchestrator.
//
// The gate's reservation (the fingerprint counted) comes before the
// prompt, so a host that fails every wake is not stormed; the prompt is
// journalled as sent before it goes out, carries its own message ID and
// an internal part (so it never counts as the user's answer to
// wait_for_user), and runs as the session's orchestrator agent. A send
// that fails is a Tool error; its outcome is in the journal.
//
// A session is managed once a task tool or an orchestrator's chat message
// registered it, or when its transcript shows that its last user message
// ran as an orchestrator agent (then it is registered here).
func Wake(ctx context.Context, cfg Config, sc HostScope, session string, enabled bool) (string, error) {
	s, err := cfg.scopeOf(Request{Context: CallContext{Directory: sc.Directory}, Host: HostInfo{ServerURL: sc.ServerURL, Flavor: sc.Flavor}})
	if err != nil {
		return "", err
	}
	switch {
	case session == "":
		return "", usageErr("a wake names no session")
	case !enabled:
		return "blocked:disabled", nil
	case s.Flavor == "v2":
		return "blocked:unsupported_host", nil
	}
	var e *engine
	managed := false
	dir := store.ScopeDir(cfg.StateDir, s.Directory, strings.TrimRight(s.ServerURL, "/"))
	if _, err := os.Lstat(filepath.Join(dir, store.DocumentName)); err == nil {
		if e, err = open(cfg, s); err != nil {
			return "", err
		}
		if err := e.view(func(st *store.State) error {
			managed = st.Orchestrators[session] != nil
			return nil
		}); err != nil {
			return "", err
		}
	}
	if !managed {
		// A session no task tool has seen (in a project that may have
		// no store yet) is managed if the host says it runs as an
		// orchestrator agent; only then is anything recorded.
		agent, err := orchestratorAgent(ctx, cfg, s, session)
		if err != nil || agent == "" {
			return "blocked:unmanaged", nil
		}
		if e == nil {
			if e, err = open(cfg, s); err != nil {
				return "", err
			}
		}
		if err := e.update(func(st *store.State) error {
			registerOrchestrator(st, session, agent, e.now())
			return nil
		}); err != nil {
			return "", err
		}
	}
	answer, err := Gate(ctx, cfg, sc, session, enabled)
	if err != nil || answer != "allowed" {
		return answer, err
	}
	opID, err := store.NewToken()
	if err != nil {
		return "", storeErr(err)
	}
	msgID := opencode.NewMessageID()
	var p *opencode.Prompt
	err = e.update(func(st *store.State) error {
		now := e.now()
		// Checked again in the transaction that marks the prompt sent:
		// a wait armed since the gate looked stops it.
		if w := st.Waits[session]; w != nil && w.Status == store.WaitingForUser {
			answer = "blocked:waiting_for_user"
			return nil
		}
		o := st.Orchestrators[session]
		if o == nil {
			answer = "blocked:unmanaged"
			return nil
		}
		if _, err := st.AddOp(store.OpRequest{ID: opID, Kind: store.OpWake, TaskID: session, ClientMessageID: msgID, Owner: e.self, LocalDeadlineAt: now.Add(e.t.Admission)}, now); err != nil {
			return err
		}
		if _, err := st.MarkSent(opID, e.self, now); err != nil {
			return err
		}
		if k := st.Wake[session]; k != nil {
			// The run this wake causes, up to the session's next idle,
			// is its own: its busy does not re-arm the cap (see Observe).
			k.ExpectingWakeBusy = true
		}
		p = &opencode.Prompt{MessageID: msgID, Agent: o.Agent, Parts: []opencode.PromptPart{opencode.InternalPart(WakeText)}}
		return nil
	})
	if err != nil || p == nil {
		return answer, err
	}
	e.crashPoint(CrashSent)
	sctx, cancel := context.WithTimeout(ctx, e.t.Admission)
	sendErr := e.host.PromptAsync(sctx, session, *p)
	cancel()
	e.crashPoint(CrashAnswered)
	if err := e.commitOutcome(func(st *store.State) error {
		phase, outcome := outcomeOf(sendErr)
		msg := ""
		if sendErr != nil {
			msg = "the wake prompt failed: " + sendErr.Error()
			if k := st.Wake[session]; k != nil && opencode.Authoritative(sendErr) {
				k.ExpectingWakeBusy = false
			}
		}
		finish(st, opID, phase, outcome, msg, e.now(), false)
		return nil
	}); err != nil {
		return "", err
	}
	if sendErr != nil {
		return "", toolErr("the wake prompt to %s failed: %v (its reservation stands: the cap counts it)", session, sendErr)
	}
	return "sent " + msgID, nil
}
