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
}

// Phases returns the phases of tool (looked up lower-cased by the caller).
func (p Plan) Phases(lower string) []Phase {
	if ph, ok := p.Tools[lower]; ok {
		return ph
	}
	return p.Default
}
