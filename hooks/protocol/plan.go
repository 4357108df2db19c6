package protocol

// Plan is the phase table a host plugin reads once, at load (`slim version
// --json` prints it as "phases"): for each tool, the phases in which slim
// may answer anything but a plain pass. The plugin runs slim only for
// those, and lets every other call through without asking, exactly as a
// pass would have.
//
// Tools maps lower-cased tool names to their phases; a plugin looks a
// call's tool up lower-cased, and a tool not in Tools has the Default
// phases. An entry covers every spelling of its name, so it is never
// narrower than what any spelling needs. Phases are Before and After;
// events are not part of the table, every event the plugin forwards goes
// to slim. A plugin that finds no table, or one it cannot read, runs every
// phase for every tool.
type Plan struct {
	Default []Phase            `json:"default"`
	Tools   map[string][]Phase `json:"tools"`
	// AfterChanges says when an after's answer can change the call:
	// AfterChangesRepeats when only a call that repeats an earlier call of
	// its session (the same tool, ignoring case, with the same arguments
	// as canonical JSON) can get anything but a pass in after. A plugin may
	// then let any other call finish without waiting for its after's answer
	// (it must still send the after, and have every after of a session
	// answered before that session's next before). Empty: every after may
	// change its call.
	AfterChanges string `json:"afterChanges,omitempty"`
	// AfterAlways lists the tools (lower case) whose after may change any
	// call of theirs, repeated or not: a plugin that lets afters trail
	// under AfterChangesRepeats must still wait for these.
	AfterAlways []string `json:"afterAlways,omitempty"`
}

// AfterChangesRepeats is Plan.AfterChanges when an after changes only a
// repeated call.
const AfterChangesRepeats = "repeats"

// Phases returns the phases of tool (looked up lower-cased by the caller).
func (p Plan) Phases(lower string) []Phase {
	if ph, ok := p.Tools[lower]; ok {
		return ph
	}
	return p.Default
}
