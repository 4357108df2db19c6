package main

import (
	"fmt"
	"slices"
	"strings"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// defaultPlan is the session's turns, one word a turn and one letter a
// call: r read, g grep, G glob, b bash, p apply_patch, t todowrite. Like a
// model's: a look around first, then searches, reads, edits and checks,
// several independent calls in one turn where a model would send them
// together.
const defaultPlan = "Gbr rrrr t gg rr p b r pp b gG rrr t p bb GG rr p b ggg rr pp b t GGr p bb gg p b t rr p bb rr"

// maxCalls is how many calls of each letter a plan may have: each call
// must have arguments of its own (so the loop guard never steps in), and
// there are that many. todowrite has no limit.
var maxCalls = map[rune]int{'r': 1 + 2*sourceFiles, 'g': len(greps), 'G': len(globs), 'b': len(bashes), 'p': (sourceLines - 2 - 12) / 7}

var toolOf = map[rune]string{'r': "read", 'g': "grep", 'G': "glob", 'b': "bash", 'p': "apply_patch", 't': "todowrite"}

// Tools are the session's tools, in the order they are reported.
var tools = []string{"read", "grep", "glob", "bash", "apply_patch", "todowrite"}

const (
	sourceFiles = 12  // src/f00.go ... src/f11.go
	sourceLines = 120 // lines of each
)

var (
	greps = []map[string]any{
		{"pattern": "return"}, {"pattern": "TODO"}, {"pattern": "func F0"}, {"pattern": "package src", "path": "src"},
		{"pattern": "line 10", "include": "*.go"}, {"pattern": "F03_"}, {"pattern": "notes", "include": "*.md"}, {"pattern": "// file 05"},
	}
	globs = []string{"**/*.go", "src/*.go", "**/*.md", "docs/*", "src/f0*.go", "**/f1*.go"}
	// Cheap commands, and a text each one's result must show.
	bashes = [][2]string{
		{"ls", "README.md"}, {"true", "(no output)"}, {"ls src", "f00.go"}, {"git status --short", "?? "},
		{"wc -l README.md", "3 README.md"}, {"pwd", "/proj"}, {"ls docs", "notes.md"}, {"true && true", "(no output)"},
		{"git rev-parse --is-inside-work-tree", "true"}, {"ls -1 src | wc -l", "12"}, {"head -n 3 README.md", "# bench project"},
		{"test -f src/f00.go && echo yes", "yes"},
	}
	readmes = "# bench project\n\nA project for the session benchmark.\n"
	notes   = "# notes\n\nSome notes.\n"
)

// call is one scripted call and what its result must show.
type call struct {
	id   string // the call id the fake provider gives it
	tool string
	// want is a text the call's output must contain.
	want string
}

// session is the scripted session: the project it starts from, the
// model's turns, the calls, and the files as the edits leave them.
type session struct {
	files map[string]string // the project at the start
	turns []fp.Turn
	calls []call
	final map[string]string // the edited files at the end
}

func sourceName(i int) string { return fmt.Sprintf("src/f%02d.go", i) }

func sourceText(i int) []string {
	lines := make([]string, sourceLines)
	for l := range lines {
		switch {
		case l == 0:
			lines[l] = "package src"
		case l%25 == 0:
			lines[l] = fmt.Sprintf("// TODO file %02d line %d", i, l)
		case l%10 == 0:
			lines[l] = fmt.Sprintf("func F%02d_%d() int { return %d }", i, l, l)
		default:
			lines[l] = fmt.Sprintf("// file %02d line %d", i, l)
		}
	}
	return lines
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") + "\n" }

// newSession builds the session of defaultPlan for a project at dir (the
// host is given absolute paths, as it gives models).
func newSession(dir string) *session {
	s, err := planSession(dir, defaultPlan)
	if err != nil {
		panic(err)
	}
	return s
}

// planSession builds the session of plan (see defaultPlan) for a project
// at dir, or says why plan cannot be run: an unknown letter, or more calls
// of a tool than it has arguments of their own.
func planSession(dir, plan string) (*session, error) {
	counts := map[rune]int{}
	for _, letter := range plan {
		if letter == ' ' {
			continue
		}
		if _, ok := toolOf[letter]; !ok {
			return nil, fmt.Errorf("plan %q: %q is not a tool letter (r, g, G, b, p, t)", plan, letter)
		}
		counts[letter]++
		if limit, ok := maxCalls[letter]; ok && counts[letter] > limit {
			return nil, fmt.Errorf("plan %q: more than %d %s calls", plan, limit, toolOf[letter])
		}
	}
	if len(strings.Fields(plan)) == 0 {
		return nil, fmt.Errorf("plan %q has no turns", plan)
	}
	s := &session{files: map[string]string{"README.md": readmes, "docs/notes.md": notes}, final: map[string]string{}}
	src := map[string][]string{}
	for i := range sourceFiles {
		src[sourceName(i)] = sourceText(i)
		s.files[sourceName(i)] = joinLines(src[sourceName(i)])
	}
	abs := func(rel string) string { return strings.TrimSuffix(dir, "/") + "/" + rel }
	n := map[rune]int{}
	for t, word := range strings.Fields(plan) {
		var calls []fp.ToolCall
		for i, letter := range word {
			k := n[letter]
			n[letter]++
			c := call{id: fp.CallID(t, i), tool: toolOf[letter]}
			var args map[string]any
			switch letter {
			case 'r':
				// The README first, then every source file, then parts of
				// them: every read has arguments of its own.
				if k == 0 {
					args, c.want = map[string]any{"filePath": abs("README.md")}, "# bench project"
				} else if f := (k - 1) % sourceFiles; k-1 < sourceFiles {
					args, c.want = map[string]any{"filePath": abs(sourceName(f))}, "1: package src"
				} else {
					args, c.want = map[string]any{"filePath": abs(sourceName(f)), "offset": 50, "limit": 20}, fmt.Sprintf("52: // file %02d line 51", f) // offset is 1-based
				}
			case 'g':
				args, c.want = greps[k], "Found "
			case 'G':
				args, c.want = map[string]any{"pattern": globs[k]}, abs("")
			case 'b':
				args, c.want = map[string]any{"command": bashes[k][0], "description": "look at the project"}, bashes[k][1]
			case 'p':
				// Edit k changes one line of one of four files; edits sent
				// together touch different files.
				name, line := sourceName(k%4), 12+k*7
				lines := src[name]
				edited := lines[line] + " edited"
				patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n %s\n-%s\n+%s\n %s\n*** End Patch", name, lines[line-1], lines[line], edited, lines[line+1])
				lines[line] = edited
				args, c.want = map[string]any{"patchText": patch}, "Success."
				s.final[name] = ""
			case 't':
				step := fmt.Sprintf("step %d", k+1)
				args, c.want = map[string]any{"todos": []map[string]any{{"id": fmt.Sprint(k + 1), "content": step, "status": "in_progress", "priority": "medium"}}}, step
			}
			calls = append(calls, fp.Call(c.tool, args))
			s.calls = append(s.calls, c)
		}
		s.turns = append(s.turns, fp.Calls(calls...))
	}
	s.turns = append(s.turns, fp.Text("done"))
	for name := range s.final {
		s.final[name] = joinLines(src[name])
	}
	return s, nil
}

// count is how many calls of tool t the session makes.
func (s *session) count(t string) int {
	n := 0
	for _, c := range s.calls {
		if c.tool == t {
			n++
		}
	}
	return n
}

// mix is how many calls of each tool the session makes, as "read 20,
// grep 8, ...".
func (s *session) mix() string {
	var parts []string
	for _, t := range tools {
		parts = append(parts, fmt.Sprintf("%s %d", t, s.count(t)))
	}
	return strings.Join(parts, ", ")
}

// parallelTurns is how many turns send more than one call.
func (s *session) parallelTurns() int {
	n := 0
	for _, t := range s.turns {
		if len(t.ToolCalls) > 1 {
			n++
		}
	}
	return n
}

// usedTools are the tools the session calls, sorted.
func (s *session) usedTools() []string {
	var out []string
	for _, c := range s.calls {
		if !slices.Contains(out, c.tool) {
			out = append(out, c.tool)
		}
	}
	slices.Sort(out)
	return out
}
