package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

func TestTheSessionIsSixtyMixedCallsInTurns(t *testing.T) {
	s := newSession("/p")
	if len(s.calls) != 60 {
		t.Fatalf("%d calls, want 60", len(s.calls))
	}
	want := map[string]int{"read": 20, "grep": 8, "glob": 6, "bash": 12, "apply_patch": 10, "todowrite": 4}
	for tool, n := range want {
		if got := s.count(tool); got != n {
			t.Errorf("%d %s calls, want %d", got, tool, n)
		}
	}
	if p := s.parallelTurns(); p < 10 {
		t.Errorf("%d turns with parallel calls, want at least 10", p)
	}
	last := s.turns[len(s.turns)-1]
	if len(last.ToolCalls) != 0 || last.Text == "" {
		t.Errorf("the last turn is %+v, want a final text", last)
	}
	k := 0
	for turn, tt := range s.turns[:len(s.turns)-1] {
		for i, c := range tt.ToolCalls {
			if got := s.calls[k]; got.id != fp.CallID(turn, i) || got.tool != c.Name {
				t.Errorf("call %d is %+v, the script sends %s as %s", k, got, c.Name, fp.CallID(turn, i))
			}
			k++
		}
	}
}

// No two calls of one tool have the same arguments, so the loop guard
// never adds a notice or refuses, and both modes do the same work.
func TestEveryCallHasArgumentsOfItsOwn(t *testing.T) {
	s := newSession("/p")
	wantCallsUnique(t, s)
}

// Every patch applies exactly as written (its old lines found once, in
// order), so no mode needs slim's rescue, and the files end as final says.
// Calls of one turn run in parallel, so they must touch different files.
func TestTheEditsApplyCleanlyAndEndAsFinal(t *testing.T) {
	s := newSession("/p")
	files := map[string]string{}
	for k, v := range s.files {
		files[k] = v
	}
	for turn, tt := range s.turns {
		var touched []string
		for _, c := range tt.ToolCalls {
			if c.Name != "apply_patch" {
				continue
			}
			var args struct {
				PatchText string `json:"patchText"`
			}
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				t.Fatal(err)
			}
			name, err := applyUpdate(files, args.PatchText)
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			if slices.Contains(touched, name) {
				t.Errorf("turn %d edits %s twice in parallel", turn, name)
			}
			touched = append(touched, name)
		}
	}
	if len(s.final) == 0 {
		t.Fatal("no file is edited")
	}
	for name, want := range s.final {
		if files[name] != want {
			t.Errorf("%s ends as\n%s\nwant\n%s", name, files[name], want)
		}
		if files[name] == s.files[name] {
			t.Errorf("%s is in final but unchanged", name)
		}
	}
}

// applyUpdate applies a patch of one Update File with one hunk, exactly:
// the hunk's old lines must occur once in the file.
func applyUpdate(files map[string]string, patch string) (string, error) {
	lines := strings.Split(patch, "\n")
	if len(lines) < 4 || lines[0] != "*** Begin Patch" || lines[len(lines)-1] != "*** End Patch" || lines[2] != "@@" {
		return "", fmt.Errorf("not a one-hunk patch: %q", patch)
	}
	name, ok := strings.CutPrefix(lines[1], "*** Update File: ")
	if !ok {
		return "", fmt.Errorf("not an update: %q", lines[1])
	}
	var old, repl []string
	for _, l := range lines[3 : len(lines)-1] {
		switch l[0] {
		case ' ':
			old, repl = append(old, l[1:]), append(repl, l[1:])
		case '-':
			old = append(old, l[1:])
		case '+':
			repl = append(repl, l[1:])
		default:
			return "", fmt.Errorf("bad line %q", l)
		}
	}
	text, ok := files[name]
	if !ok {
		return "", fmt.Errorf("%s does not exist", name)
	}
	from, to := strings.Join(old, "\n")+"\n", strings.Join(repl, "\n")+"\n"
	if n := strings.Count("\n"+text, "\n"+from); n != 1 {
		return "", fmt.Errorf("the old lines of the %s patch occur %d times", name, n)
	}
	files[name] = strings.TrimPrefix(strings.Replace("\n"+text, "\n"+from, "\n"+to, 1), "\n")
	return name, nil
}

// A plan given with -plan is built like the default one, and refused when
// it names an unknown tool or more calls of a tool than have arguments of
// their own (a repeated call would bring in the loop guard).
func TestAnotherPlanIsBuiltOrRefused(t *testing.T) {
	s, err := planSession("/p", "t tt r")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.calls) != 4 || s.count("todowrite") != 3 || s.count("read") != 1 || len(s.turns) != 4 {
		t.Errorf("plan \"t tt r\": %d calls (%s) in %d turns, want 4 in 3 turns and a final text", len(s.calls), s.mix(), len(s.turns))
	}
	for _, bad := range []string{"", "  ", "t x", strings.Repeat("g", len(greps)+1), strings.Repeat("r ", maxCalls['r']+1)} {
		if _, err := planSession("/p", bad); err == nil {
			t.Errorf("plan %q was accepted", bad)
		}
	}
	// The largest plan allowed still has no two calls alike.
	var all []string
	for letter, n := range maxCalls {
		all = append(all, strings.Repeat(string(letter)+" ", n))
	}
	s, err = planSession("/p", strings.Join(all, ""))
	if err != nil {
		t.Fatal(err)
	}
	wantCallsUnique(t, s)
}

// wantCallsUnique fails t for every call of s whose tool and arguments an
// earlier call already had.
func wantCallsUnique(t *testing.T, s *session) {
	t.Helper()
	seen := map[string]bool{}
	for _, tt := range s.turns {
		for _, c := range tt.ToolCalls {
			key := c.Name + " " + string(c.Arguments)
			if seen[key] {
				t.Errorf("%s is sent twice", key)
			}
			seen[key] = true
		}
	}
}
