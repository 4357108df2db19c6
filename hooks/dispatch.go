// Package hooks answers the host plugin's hook requests: one request per
// process, run through the guards in a fixed order, one combined answer.
//
// In before, the tool's own guard runs first (apply_patch: containment then
// rescue; grep and glob: re-anchoring then the path pre-check), then the
// loop guard on the resulting args, which only reads its state. The first
// block wins; otherwise the answer is mutate when a guard changed the args
// and pass when none did. In after, the loop guard counts the result, keyed
// on the args the host hands to after, and may ask for a notice to be
// appended. Events reset the loop guard on session.deleted. Plan tells the
// host plugin which tools can get anything but a plain pass in which phase,
// so that it runs slim only for those.
//
// Every decision is a successful answer. Guard failures (a store that
// cannot be locked, a pre-check that errs) let the call pass and are logged,
// with one exception: apply_patch fails closed. A patch whose check fails,
// panics or runs out of its time budget is blocked, because a patch nobody
// checked must not reach the files.
package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/internal/filelock"
	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/search"
	"github.com/slimgate/slim/worktree/hostpath"
)

// DefaultPatchBudget is the wall-clock time one apply_patch check may take
// when the Dispatcher sets none: well inside the plugin's default timeout of
// 5 s, so that slim answers block itself instead of being killed.
const DefaultPatchBudget = 3 * time.Second

// Dispatcher holds the guards of one process. A guard that is off is
// skipped.
type Dispatcher struct {
	// PatchGuard turns on the apply_patch guard: rescue.Process checks the
	// containment of every target, then validates and rescues the patch,
	// and the call is handed on with the original patch, a rewritten one,
	// or refused.
	PatchGuard bool
	// SearchGuard turns on the grep/glob path pre-check (search.Precheck):
	// a stale absolute path is re-anchored on the workspace, a missing or
	// invalid one blocks the call.
	SearchGuard bool
	// Loop is the loop guard; nil turns it off.
	Loop *loopguard.Guard
	// Tasks, when set, takes every host event for the background task
	// tools (deletions, status changes, idle parents, chat messages). Its
	// error is logged and noted; the event still passes.
	Tasks func(protocol.Host, protocol.EventInfo) error
	// TaskOutput, when set, sees the arguments and output of every call of
	// the host's own task tool, for the background task tools to track the
	// subagent sessions it starts. The text it returns, when not empty, is
	// appended to the tool's output for the model; its error is logged and
	// noted.
	TaskOutput func(h protocol.Host, sessionID string, args, output any) (string, error)
	// Outside is the policy for apply_patch targets outside the workspace:
	// rescue.OutsideBlock (also when empty) or rescue.OutsidePassthrough.
	// AllowNested lets targets in nested worktrees count as inside. No
	// request field can change either; the slim command sets them from
	// SLIM_OUTSIDE and SLIM_ALLOW_NESTED.
	Outside     string
	AllowNested bool
	// PatchBudget bounds the wall-clock time of one apply_patch check; zero
	// means DefaultPatchBudget. When it runs out the call is blocked.
	PatchBudget time.Duration
	// Format, when set, runs after an apply (apply mode) the formatters
	// the host would run on each written file, with directory the
	// session's; nil runs none.
	Format func(directory string, files []string) []FormatReport
	// BeforeWrite is handed to the apply of apply mode as
	// rescue.Options.BeforeWrite (a test of interruption pauses there).
	BeforeWrite func(i int)
	Log         zerolog.Logger

	// process stands in for rescue.Process in this package's tests (a
	// check that ignores its context, fails or panics); nil means
	// rescue.Process.
	process func(patch []byte, opts rescue.Options) (*rescue.Result, error)
}

// Handle answers one validated request.
func (d *Dispatcher) Handle(req *protocol.Request) protocol.Response {
	return d.HandleContext(context.Background(), req)
}

// HandleContext answers one validated request. A deadline of ctx bounds the
// apply_patch check as PatchBudget does (the earlier of the two wins), so a
// caller can count the time it spent reading the request.
func (d *Dispatcher) HandleContext(ctx context.Context, req *protocol.Request) protocol.Response {
	switch req.Phase {
	case protocol.Before:
		return d.before(ctx, req)
	case protocol.After:
		return d.after(req)
	case protocol.Event:
		return d.event(req)
	}
	return pass()
}

func pass() protocol.Response { return protocol.Response{V: protocol.Version, Action: protocol.Pass} }

func block(msg string, notes []string) protocol.Response {
	return protocol.Response{V: protocol.Version, Action: protocol.Block, Message: msg, Notes: notes}
}

// loopTool is the name the loop guard sees: v2 hosts call delegation
// "subagent", which is the v1 "task" tool and exempt like it.
func loopTool(req *protocol.Request) string {
	if req.Host.Generation == "v2" && strings.EqualFold(req.Tool, "subagent") {
		return "task"
	}
	return req.Tool
}

func (d *Dispatcher) before(ctx context.Context, req *protocol.Request) protocol.Response {
	var notes []string
	var mutated map[string]any // the full new args when a guard changed them
	args := req.ArgsObject()

	switch d.toolGuard(req.Tool) {
	case patchGuard:
		patch, ok := args["patchText"].(string)
		if !ok {
			break
		}
		res, err := d.checkPatch(ctx, patch, d.patchOptions(req))
		if err != nil {
			// rescue's errors carry their whole message; anything else (a
			// check that panicked) is worded here, as an internal error.
			kind, code, msg := rescue.Internal, rescue.CodeInternal, "apply_patch internal error: "+err.Error()
			if re := new(rescue.Error); errors.As(err, &re) {
				kind, code, msg = re.Kind, re.Code, re.Message
			}
			d.Log.Info().Str("kind", string(kind)).Str("code", code).Msg("apply_patch refused")
			return block(msg, []string{"apply_patch: " + string(kind)})
		}
		for _, w := range res.Warnings {
			notes = append(notes, "apply_patch: warning: "+w)
		}
		switch res.Decision {
		case rescue.DecisionRewrite:
			text := ""
			if res.PatchText != nil {
				text = *res.PatchText
			}
			if text != patch {
				mutated = copyArgs(args)
				mutated["patchText"] = text
				notes = append(notes, "apply_patch: rescued")
			}
		case rescue.DecisionBlock:
			return block("apply_patch blocked: the patch was refused", []string{"apply_patch: blocked"})
		case rescue.DecisionPassthrough:
			notes = append(notes, "apply_patch: passthrough (outside, host will ask)")
		}
	case searchGuard:
		if args == nil {
			break
		}
		h := req.Host
		out, err := search.Precheck(req.Tool, args, search.Host{Generation: h.Generation, Platform: h.Platform, Directory: h.Directory, Cwd: h.Cwd})
		if err != nil {
			// Not evidence that the path is wrong: the call goes ahead
			// (with re-anchored args, if the pre-check got that far).
			d.Log.Warn().Err(err).Str("tool", req.Tool).Msg("search pre-check could not decide; passing")
			notes = append(notes, "search pre-check: "+err.Error())
		}
		if out.Block != "" && err == nil {
			return block(out.Block, []string{req.Tool + ": path pre-check"})
		}
		if out.Args != nil {
			mutated = out.Args
			notes = append(notes, req.Tool+": path re-anchored")
		}
	}

	if d.Loop != nil {
		var fpArgs any = req.Args
		if mutated != nil {
			fpArgs = mutated
		}
		refusal, err := d.Loop.Before(loopTool(req), req.SessionID, fpArgs)
		if err != nil {
			d.Log.Warn().Err(err).Str("session", req.SessionID).Msg("loop guard unavailable; passing")
			notes = append(notes, "loop guard: "+failOpenNote(err))
		} else if refusal != "" {
			return block(refusal, append(notes, "loop guard: refused"))
		}
	}

	if mutated != nil {
		return protocol.Response{V: protocol.Version, Action: protocol.Mutate, Args: mutated, Notes: notes}
	}
	r := pass()
	r.Notes = notes
	return r
}

// checkPatch runs rescue.Process on the patch within the budget. It
// answers at the deadline even when the check has not returned (its
// goroutine is left to notice its context), and turns a panic into an
// internal error, so that neither lets the patch pass unchecked. A nil
// error comes with a result.
func (d *Dispatcher) checkPatch(ctx context.Context, patch string, opts rescue.Options) (*rescue.Result, error) {
	budget := d.PatchBudget
	if budget <= 0 {
		budget = DefaultPatchBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	opts.Context = ctx
	process := d.process
	if process == nil {
		process = rescue.Process
	}
	type outcome struct {
		res *rescue.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				d.Log.Error().Interface("panic", p).Msg("apply_patch check panicked; blocking")
				done <- outcome{nil, fmt.Errorf("the check failed: %v", p)}
			}
		}()
		res, err := process([]byte(patch), opts)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		select {
		case o := <-done: // finished as the deadline passed: its answer stands
			return o.res, o.err
		default:
		}
		return nil, budgetError(ctx, budget)
	}
}

// budgetError is the refusal of a patch whose check did not finish in time.
func budgetError(ctx context.Context, budget time.Duration) error {
	return &rescue.Error{Kind: rescue.Blocked, Code: rescue.CodeBudget, Err: ctx.Err(),
		Message: fmt.Sprintf("apply_patch blocked: slim could not finish checking this patch within its time budget (%v); split it into smaller patches", budget)}
}

// TooLarge answers a request that was not read because it is larger than
// protocol.MaxRequestBytes. A before request for apply_patch is blocked: its
// patch cannot be checked. For anything else ok is false and the caller
// reports the bad request as usual, which lets the call pass.
func (d *Dispatcher) TooLarge(phase protocol.Phase, err *protocol.TooLargeError) (resp protocol.Response, ok bool) {
	if phase != protocol.Before || err.Tool != "apply_patch" || !d.PatchGuard {
		return protocol.Response{}, false
	}
	d.Log.Info().Int("limit", err.Limit).Msg("apply_patch request too large; blocking")
	return block(fmt.Sprintf("apply_patch blocked: the request is larger than %d MiB, the most slim reads, so the patch was not checked; split it into smaller patches", err.Limit>>20),
		[]string{"apply_patch: blocked", "apply_patch: request too large"}), true
}

// patchOptions are the rescue options for the request's patch: the host's
// directory (its cwd when it names none), worktree and path rules, and the
// process's outside policy and nested switch.
func (d *Dispatcher) patchOptions(req *protocol.Request) rescue.Options {
	dir := req.Host.Directory
	if dir == "" {
		dir = req.Host.Cwd
	}
	flavor := hostpath.Native
	if req.Host.Platform != "" {
		flavor = hostpath.ForPlatform(req.Host.Platform)
	}
	outside := d.Outside
	if outside == "" {
		outside = rescue.OutsideBlock
	}
	// The host spells "no worktree" as "/" (OpenCode outside git).
	wt := req.Host.Worktree
	none := wt == "/" || wt == `\`
	if none {
		wt = ""
	}
	return rescue.Options{
		Directory:   dir,
		Worktree:    wt,
		NoWorktree:  none,
		Flavor:      flavor,
		Outside:     outside,
		AllowNested: d.AllowNested,
	}
}

func (d *Dispatcher) after(req *protocol.Request) protocol.Response {
	var notes []string
	text := ""
	if d.watchesTaskOutput(req.Tool) {
		// The host's own task tool launched (or ran) a subagent: the
		// background task tools track it from its output, and say so
		// when they cannot.
		note, err := d.TaskOutput(req.Host, req.SessionID, req.Args, req.Output)
		if err != nil {
			d.Log.Warn().Err(err).Str("session", req.SessionID).Msg("background tasks did not record the task call")
			notes = append(notes, "tasks: "+err.Error())
		}
		if _, isText := req.Output.(string); isText && note != "" {
			text = note
			notes = append(notes, "tasks: not tracked")
		}
	}
	if notice, note := d.loopAfter(req, req.Output); note != "" {
		text += notice
		notes = append(notes, note)
	}
	if text == "" {
		r := pass()
		r.Notes = notes
		return r
	}
	return protocol.Response{V: protocol.Version, Action: protocol.Append, Append: text, Notes: notes}
}

// loopAfter counts a call's result in the loop guard, when there is one:
// the notice to append to a repeated result, and the note that says what
// happened ("" when nothing did). A guard that fails passes the call.
func (d *Dispatcher) loopAfter(req *protocol.Request, output any) (notice, note string) {
	if d.Loop == nil {
		return "", ""
	}
	notice, err := d.Loop.After(loopTool(req), req.SessionID, req.Args, output)
	switch {
	case err != nil:
		d.Log.Warn().Err(err).Str("session", req.SessionID).Msg("loop guard unavailable; passing")
		return "", "loop guard: " + failOpenNote(err)
	case notice != "":
		return notice, "loop guard: repeated identical result"
	}
	return "", ""
}

func (d *Dispatcher) event(req *protocol.Request) protocol.Response {
	if req.Event == nil {
		return pass()
	}
	sid := req.Event.SessionID
	if sid == "" {
		sid = req.SessionID
	}
	r := pass()
	if d.Tasks != nil {
		ev := *req.Event
		ev.SessionID = sid
		if err := d.Tasks(req.Host, ev); err != nil {
			d.Log.Warn().Err(err).Str("event", ev.Type).Str("session", sid).Msg("background tasks did not take the event")
			r.Notes = append(r.Notes, "tasks: "+err.Error())
		}
	}
	if req.Event.Type != "session.deleted" || d.Loop == nil {
		return r
	}
	existed, err := d.Loop.Reset(sid)
	switch {
	case err != nil:
		d.Log.Warn().Err(err).Str("session", sid).Msg("loop guard reset failed")
		r.Notes = append(r.Notes, "loop guard: "+failOpenNote(err))
	case existed:
		r.Notes = append(r.Notes, "loop guard: session state cleared")
	}
	return r
}

func failOpenNote(err error) string {
	if errors.Is(err, filelock.ErrTimeout) {
		return "state locked by another call; failed open"
	}
	return "state error; failed open"
}

// copyArgs returns a shallow copy of args (an empty object for nil), so a
// mutate answer keeps every original key.
func copyArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	return out
}
