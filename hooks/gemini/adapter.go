package gemini

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks"
	"github.com/slimgate/slim/hooks/internal/hookcmd"
	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// Output is the JSON object Gemini CLI reads from a hook's stdout (exit 0).
// The zero Output ({}) lets the call go on as it would without slim: slim
// never answers "allow", which would skip the user's own confirmation.
type Output struct {
	// Decision is "deny" (the call does not run; Reason is shown to the
	// model) or "ask" (Gemini CLI asks the user); empty leaves the decision
	// to Gemini CLI. BeforeTool only.
	Decision string `json:"decision,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// SystemMessage is shown to the user, not the model.
	SystemMessage      string    `json:"systemMessage,omitempty"`
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName string `json:"hookEventName"`
	// ToolInput is the call's whole new input (BeforeTool): Gemini CLI
	// builds the call from it alone.
	ToolInput map[string]any `json:"tool_input,omitempty"`
	// AdditionalContext is text appended for the model (AfterTool: the
	// loop guard's notice).
	AdditionalContext string `json:"additionalContext,omitempty"`
}

// writeTools are Gemini CLI's tools that write a file; both name it in
// file_path. Their containment is checked before they run, and they fail
// closed.
func writeTools() []string { return []string{"write_file", "replace"} }

// IsWriteTool reports whether tool is one of Gemini CLI's file-writing
// tools (write_file, replace), matched exactly.
func IsWriteTool(tool string) bool {
	for _, t := range writeTools() {
		if t == tool {
			return true
		}
	}
	return false
}

// searchTools are Gemini CLI's searches, each with the dispatcher's name
// for it: their dir_path gets the path pre-check, and the loop guard can
// refuse them.
func searchTools() map[string]string {
	return map[string]string{"glob": "glob", "grep_search": "grep", "search_file_content": "grep"}
}

// dispatcherTool is the name under which the dispatcher sees a Gemini CLI
// tool: the searches are its grep and glob, read_file its read; every
// other tool keeps its name.
func dispatcherTool(tool string) string {
	if t, ok := searchTools()[tool]; ok {
		return t
	}
	if tool == "read_file" {
		return "read"
	}
	return tool
}

// BeforeToolTools are the tools for which BeforeTool can answer anything
// but a plain pass: the write tools, the searches, and those of Gemini
// CLI's other tools the loop guard can refuse (read_file). The installer's
// BeforeTool matcher names exactly these, so that Gemini CLI starts slim
// before no other tool; every tool gets AfterTool, where the loop guard
// counts.
func BeforeToolTools() []string {
	tools := append(writeTools(), "glob", "grep_search", "search_file_content")
	for _, t := range []string{"read_file", "read_many_files", "list_directory", "run_shell_command", "web_fetch", "google_web_search"} {
		if before, _ := loopguard.Phases(dispatcherTool(t)); before {
			tools = append(tools, t)
		}
	}
	return tools
}

// BeforeToolMatcher is the BeforeTool matcher for BeforeToolTools: Gemini
// CLI tests a matcher as an unanchored regular expression, so the names are
// anchored as a whole.
func BeforeToolMatcher() string { return "^(" + strings.Join(BeforeToolTools(), "|") + ")$" }

// Adapter answers Gemini CLI's hook requests with slim's guards.
type Adapter struct {
	// Dispatcher runs the path pre-check and the loop guard.
	Dispatcher *hooks.Dispatcher
	// AllowNested lets write targets in nested worktrees and submodules
	// count as inside.
	AllowNested bool
	// Passthrough turns a write whose target is outside by its spelling
	// alone into "ask" (Gemini CLI's own confirmation) instead of a deny.
	// Targets that are outside only through a link are denied.
	Passthrough bool
	Log         zerolog.Logger
}

// Handle answers one decoded request.
func (a *Adapter) Handle(ctx context.Context, in *Input) Output {
	switch in.HookEventName {
	case BeforeTool:
		return a.before(ctx, in)
	case AfterTool:
		return a.after(in)
	}
	return Output{}
}

// Malformed answers a request that did not decode (raw is what was read,
// err why). For a write tool before it runs it is a deny that says why: a
// write slim cannot check does not run. Any other request passes, telling
// the user that slim could not read it.
func (a *Adapter) Malformed(raw []byte, err error) Output {
	event, tool := hookcmd.Peek(raw)
	if event != AfterTool && IsWriteTool(tool) {
		a.Log.Info().Err(err).Str("tool", tool).Msg("gemini-cli request unreadable; denying the write")
		return deny(fmt.Sprintf("slim could not check this %s call, so it was not run: %v", tool, err))
	}
	a.Log.Warn().Err(err).Msg("gemini-cli request unreadable; the call runs unchecked")
	return Output{SystemMessage: fmt.Sprintf("slim could not read this hook request; the call runs unchecked: %v", err)}
}

func deny(reason string) Output { return Output{Decision: "deny", Reason: reason} }

// host is the dispatcher's view of the Gemini CLI process: the session's
// directory is the request's cwd (Gemini CLI's working directory, where it
// resolves relative paths and runs its hooks; a request without one is
// taken to mean the hook's working directory), on the running system's
// path rules.
func host(in *Input) protocol.Host {
	dir := in.Cwd
	if dir == "" {
		if wd, err := os.Getwd(); err == nil {
			dir = wd
		}
	}
	return protocol.Host{Generation: "v2", Platform: hookcmd.Platform(), Directory: dir, Cwd: dir}
}

// args are the tool's arguments as the dispatcher reads them: a search's
// dir_path is its path; every other tool's input is passed as it is.
func args(in *Input) map[string]any {
	if _, ok := searchTools()[in.ToolName]; !ok {
		return in.ToolInput
	}
	dir, ok := in.ToolInput["dir_path"]
	if !ok {
		return in.ToolInput
	}
	out := make(map[string]any, len(in.ToolInput))
	for k, v := range in.ToolInput {
		if k != "dir_path" {
			out[k] = v
		}
	}
	out["path"] = dir
	return out
}

func (a *Adapter) request(phase protocol.Phase, in *Input) *protocol.Request {
	return &protocol.Request{V: protocol.Version, Phase: phase, Host: host(in),
		Tool: dispatcherTool(in.ToolName), SessionID: in.SessionID, Args: args(in)}
}

func (a *Adapter) before(ctx context.Context, in *Input) Output {
	if IsWriteTool(in.ToolName) {
		if out, stop := a.contain(in); stop {
			return out
		}
	}
	resp := a.Dispatcher.HandleContext(ctx, a.request(protocol.Before, in))
	a.logNotes(in, resp)
	switch resp.Action {
	case protocol.Block:
		msg := strings.TrimSpace(resp.Message)
		if msg == "" {
			msg = in.ToolName + " blocked by slim"
		}
		return deny(msg)
	case protocol.Mutate:
		if input, changed := newInput(in, resp.Args); changed {
			return Output{HookSpecificOutput: &Specific{HookEventName: BeforeTool, ToolInput: input}}
		}
	}
	return Output{}
}

// newInput is the call's whole tool_input with the dispatcher's new args
// applied under Gemini CLI's names (a search's path is its dir_path), and
// whether any of them differs from the call's. The whole input, not only
// the changed arguments: Gemini CLI 0.61.0 builds the call from
// hookSpecificOutput.tool_input alone, so an argument left out would be
// dropped.
func newInput(in *Input, newArgs map[string]any) (map[string]any, bool) {
	_, search := searchTools()[in.ToolName]
	_, hadDir := in.ToolInput["dir_path"]
	out := make(map[string]any, len(in.ToolInput)+len(newArgs))
	for k, v := range in.ToolInput {
		out[k] = v
	}
	changed := false
	for k, v := range newArgs {
		name := k
		if search && hadDir && k == "path" {
			name = "dir_path"
		}
		if old, ok := in.ToolInput[name]; ok && fmt.Sprint(old) == fmt.Sprint(v) {
			continue
		}
		out[name] = v
		changed = true
	}
	return out, changed
}

// contain checks the target of a write tool. stop is true when the answer
// is out: a deny (outside, into .git, through a link out, or a target slim
// cannot read or check) or, with Passthrough, an ask.
func (a *Adapter) contain(in *Input) (out Output, stop bool) {
	c := hookcmd.CheckWrite(a.Log, host(in).Directory, in.ToolName, in.ToolInput, "file_path", a.AllowNested, a.Passthrough)
	switch {
	case c.Refusal == "":
		return Output{}, false
	case c.Ask:
		return Output{Decision: "ask", Reason: c.Refusal, SystemMessage: c.Refusal}, true
	}
	return deny(c.Refusal), true
}

// responseText is what the loop guard compares of a result: the text the
// model saw (llmContent) when the response carries it, else the whole
// response.
func responseText(v any) any {
	if m, ok := v.(map[string]any); ok {
		if c, ok := m["llmContent"]; ok && c != nil {
			return hookcmd.ResponseText(c)
		}
	}
	return hookcmd.ResponseText(v)
}

func (a *Adapter) after(in *Input) Output {
	req := a.request(protocol.After, in)
	req.Output = responseText(in.ToolResponse)
	resp := a.Dispatcher.HandleContext(context.Background(), req)
	a.logNotes(in, resp)
	if resp.Action == protocol.Append && resp.Append != "" {
		return Output{HookSpecificOutput: &Specific{HookEventName: AfterTool, AdditionalContext: strings.TrimPrefix(resp.Append, "\n")}}
	}
	return Output{}
}

func (a *Adapter) logNotes(in *Input, resp protocol.Response) {
	hookcmd.LogNotes(a.Log, in.ToolName, resp, "gemini-cli hook")
}
