package tasks

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/store"
)

type messageArgs struct {
	idArgs
	Message string `json:"message"`
}

// runMessage is task_message: queue a note for a running task without
// starting a run (noReply). The send is the settler's, under a message
// lease; a send that outlives the deadline keeps the lease until it
// settles.
func runMessage(ctx context.Context, e *engine, req Request) (*Result, error) {
	var a messageArgs
	if err := decodeArgs("task_message", req.Args, &a); err != nil {
		return nil, err
	}
	parent, name := req.Context.SessionID, a.id()
	text := strings.TrimSpace(a.Message)
	switch {
	case name == "":
		return nil, toolErr("task_message requires task_id")
	case text == "":
		return nil, toolErr("task_message requires a non-empty message")
	case utf8.RuneCountInString(text) > 500:
		return nil, toolErr("task_message: the message is longer than 500 characters")
	case e.v2():
		// A v2 host has no noReply: every message starts a run, so a
		// "message" would steer the task off what it is doing.
		return nil, toolErr("task_message is not available on this host: it serves OpenCode's v2 API, which cannot add a message to a session without starting a run, so the message would interrupt the task's current direction. Nothing was sent. Let the task finish and use task_revive with the new instruction, or task_cancel it.")
	}
	var c *captured
	err := e.update(func(st *store.State) error {
		j := resolve(st, parent, name)
		switch {
		case j == nil:
			return unknownTask(name)
		case j.CancellationRequested:
			return toolErr("Task %s cannot queue a message: cancellation was requested", name)
		case j.State != store.JobRunning:
			return toolErr("Task %s cannot queue a message: board state is %s, not running", name, j.State)
		}
		var err error
		c, err = e.capture(st, j, store.LeaseMessage, store.OpMessage, "", e.t.Message)
		if isLeaseHeld(err) {
			return toolErr("Task %s cannot queue a message: message/control lease unavailable%s", name, leaseNote(st, j.TaskID))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	prompt := &opencode.Prompt{Agent: c.job.Agent, NoReply: true, Parts: []opencode.PromptPart{{Type: "text", Text: text}}}
	h, err := e.spawnSettler(order{Scope: e.scope(), OpID: c.opID, Foreground: e.self, Name: name, Prompt: prompt})
	if err != nil {
		e.abandon(c, err.Error())
		return nil, err
	}
	op, timedOut, err := e.awaitOp(ctx, h, c.opID, e.t.Message)
	switch {
	case err != nil:
		return nil, err
	case timedOut:
		return nil, toolErr("Task message transport timed out after %dms", e.t.Message.Milliseconds())
	case op.Outcome != store.OutcomeAccepted:
		return nil, toolErr("%s", op.Error)
	}
	return &Result{
		Status: "queued", State: "running", TaskID: c.job.TaskID, Alias: c.job.Alias, Generation: c.job.Generation,
		Text: fmt.Sprintf("status: queued\nMessage queued for %s (%s) without launching or resuming it.", c.job.Alias, c.job.TaskID),
	}, nil
}

func isLeaseHeld(err error) bool {
	se, ok := store.AsError(err)
	return ok && se.Code == store.CodeLeaseHeld
}
