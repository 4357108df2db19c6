package hooks

import (
	"strings"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// guardKind is a tool's own guard in before.
type guardKind int

const (
	noGuard     guardKind = iota
	patchGuard            // apply_patch: containment, then rescue
	searchGuard           // grep and glob: re-anchoring, then the path pre-check
)

// guardedTools are the tools with a guard of their own in before. Their
// names are matched exactly (case included).
func guardedTools() []string { return []string{"apply_patch", "grep", "glob"} }

// toolGuard is the guard of tool that runs in before: the one switch that
// both before and Plan read.
func (d *Dispatcher) toolGuard(tool string) guardKind {
	switch tool {
	case "apply_patch":
		if d.PatchGuard {
			return patchGuard
		}
	case "grep", "glob":
		if d.SearchGuard {
			return searchGuard
		}
	}
	return noGuard
}

// watchesTaskOutput reports whether after hands the call to TaskOutput:
// the host's own task tool (matched exactly), when TaskOutput is set.
func (d *Dispatcher) watchesTaskOutput(tool string) bool {
	return tool == "task" && d.TaskOutput != nil
}

// Plan is the phase table of d for a host plugin: for each tool the
// phases in which d may answer anything but a plain pass, with no notes
// and no state touched. A tool's before matters when it has a guard of its
// own or the loop guard can refuse it; its after when the loop guard counts
// it or TaskOutput watches it. Tools no rule names get after only when the
// loop guard is on (it counts every tool it does not exempt).
//
// Every name the rules match exactly is lower case, and the loop guard
// ignores case, so the entry of a lower-cased name is never narrower than
// what any spelling of it needs: the table can be looked up lower-cased.
// It is computed with v1 tool names; on v2 hosts `subagent` is exempt from
// the loop guard as `task` is, which only makes the table wider than needed.
func (d *Dispatcher) Plan() protocol.Plan {
	// No rule matches the empty name (and no request carries it), so its
	// phases are those of every tool no rule names.
	p := protocol.Plan{Default: d.phases(""), Tools: map[string][]protocol.Phase{}}
	names := append(guardedTools(), "task")
	if d.Loop != nil {
		names = append(names, loopguard.NamedTools()...)
	}
	for _, name := range names {
		p.Tools[strings.ToLower(name)] = d.phases(name)
	}
	// In after, the loop guard appends its notice only to the result of a
	// call identical to the one before it; the task tools' observation of
	// the host's own task may append a note to any call of it (a run a
	// lease keeps untracked), so that one is always waited for. Nothing
	// else answers there.
	p.AfterChanges = protocol.AfterChangesRepeats
	if d.TaskOutput != nil {
		p.AfterAlways = []string{"task"}
	}
	return p
}

// phases are the phases in which a call of tool, spelled exactly so, can
// get an answer other than a plain pass.
func (d *Dispatcher) phases(tool string) []protocol.Phase {
	before := d.toolGuard(tool) != noGuard
	after := d.watchesTaskOutput(tool)
	if d.Loop != nil {
		lb, la := loopguard.Phases(tool)
		before, after = before || lb, after || la
	}
	out := []protocol.Phase{}
	if before {
		out = append(out, protocol.Before)
	}
	if after {
		out = append(out, protocol.After)
	}
	return out
}
