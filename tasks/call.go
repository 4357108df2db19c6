package tasks

import (
	"context"
	"sort"
)

// Result is a tool's answer. Text is what the model reads, in the wording
// the orchestrator prompts expect; the other fields are the same answer
// for machines (--json).
type Result struct {
	Text            string `json:"-"`
	Status          string `json:"status"`
	State           string `json:"state,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	Generation      int64  `json:"generation,omitempty"`
	Alias           string `json:"alias,omitempty"`
	StatusUncertain bool   `json:"status_uncertain,omitempty"`
	Message         string `json:"message,omitempty"`
}

// toolFunc runs one tool against an engine.
type toolFunc func(ctx context.Context, e *engine, req Request) (*Result, error)

// tools are the model-facing tools, by command name.
func tools() map[string]toolFunc {
	return map[string]toolFunc{
		"task":          runTask,
		"status":        runStatus,
		"result":        runResult,
		"message":       runMessage,
		"cancel":        runCancel,
		"revive":        runRevive,
		"wait-for-user": runWaitForUser,
	}
}

// ToolNames lists the tools Call accepts, sorted.
func ToolNames() []string {
	var out []string
	for k := range tools() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Call runs one tool call: the request's scope is opened, the tool runs,
// and its answer is returned. A tool's refusal is an *Error of kind Tool
// whose message is the model's answer; a Store error means nothing was
// sent to the host.
func Call(ctx context.Context, cfg Config, tool string, req Request) (*Result, error) {
	fn, ok := tools()[tool]
	if !ok {
		return nil, usageErr("unknown task tool %q; want one of %v", tool, ToolNames())
	}
	if req.Context.SessionID == "" {
		return nil, toolErr("%s requires sessionID", toolLabel(tool))
	}
	sc, err := cfg.scopeOf(req)
	if err != nil {
		return nil, err
	}
	e, err := open(cfg, sc)
	if err != nil {
		return nil, err
	}
	return fn(ctx, e, req)
}

// toolLabel is the name the model knows a tool by.
func toolLabel(tool string) string {
	switch tool {
	case "task":
		return "task"
	case "wait-for-user":
		return "wait_for_user"
	}
	return "task_" + tool
}
