package hooks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// wired is a Dispatcher with every guard on, as `slim hook` runs it.
func wired(h *harness, taskCalls *int) {
	h.d.PatchGuard = true
	h.d.SearchGuard = true
	h.d.TaskOutput = func(protocol.Host, string, any, any) (string, error) { *taskCalls++; return "", nil }
}

func TestPlanOfEveryGuard(t *testing.T) {
	h := newHarness(t)
	wired(h, new(int))
	ba := []protocol.Phase{protocol.Before, protocol.After}
	after := []protocol.Phase{protocol.After}
	none := []protocol.Phase{}
	want := protocol.Plan{
		Default: after,
		Tools: map[string][]protocol.Phase{
			"apply_patch": ba, "grep": ba, "glob": ba, "read": ba,
			"task":        after,
			"task_status": none, "task_result": none, "task_cancel": none, "task_message": none,
			"task_revive": none, "wait_for_user": none, "wait_for_background_tasks": none,
		},
		AfterChanges: protocol.AfterChangesRepeats,
		AfterAlways:  []string{"task"},
	}
	if got := h.d.Plan(); !reflect.DeepEqual(got, want) {
		t.Fatalf("plan\n got %+v\nwant %+v", got, want)
	}
	// On the wire: phases as lists (never null), tools in a stable order.
	data, _ := json.Marshal(h.d.Plan())
	if !strings.HasPrefix(string(data), `{"default":["after"],"tools":{"apply_patch":["before","after"],"glob":["before","after"],"grep":["before","after"],"read":["before","after"],"task":["after"],"task_cancel":[],`) {
		t.Fatalf("plan JSON: %s", data)
	}
}

func TestPlanFollowsTheGuardsThatAreOn(t *testing.T) {
	cases := []struct {
		name string
		d    Dispatcher
		want map[string][]protocol.Phase // "" is the default
	}{
		{"nothing on", Dispatcher{}, map[string][]protocol.Phase{"": {}, "read": {}, "apply_patch": {}, "task": {}}},
		{"patch guard only", Dispatcher{PatchGuard: true}, map[string][]protocol.Phase{"": {}, "apply_patch": {protocol.Before}, "grep": {}}},
		{"search guard only", Dispatcher{SearchGuard: true}, map[string][]protocol.Phase{"grep": {protocol.Before}, "glob": {protocol.Before}, "read": {}}},
		{"task output only", Dispatcher{TaskOutput: func(protocol.Host, string, any, any) (string, error) { return "", nil }}, map[string][]protocol.Phase{"task": {protocol.After}, "task_status": {}}},
		{"loop guard only", Dispatcher{Loop: &loopguard.Guard{}}, map[string][]protocol.Phase{
			"": {protocol.After}, "read": {protocol.Before, protocol.After}, "apply_patch": {protocol.After}, "task": {}, "wait_for_user": {},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.d.Plan()
			for tool, want := range c.want {
				got := p.Default
				if tool != "" {
					got = p.Phases(tool)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%q: %v, want %v", tool, got, want)
				}
			}
		})
	}
}

// snapshot is every file under dir with its bytes and modification time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, _ := d.Info()
		data, _ := os.ReadFile(p)
		out[p] = fi.ModTime().String() + "\x00" + string(data)
		return nil
	})
	return out
}

// The plan agrees with the dispatcher: for every tool (each one a rule
// names, in several spellings, and others) and every phase the plan leaves
// out, the dispatcher answers a plain pass, with no notes, whatever the
// call and the state are, touches no state and hands nothing to the task
// tools, so a plugin that skips the phase loses nothing. The calls are
// made to provoke every guard: a patch that writes outside, a search path
// that does not exist, a run that refuses its next identical call.
func TestPlanAgreesWithTheDispatcher(t *testing.T) {
	tools := []string{"read", "Read", "READ", "grep", "Grep", "glob", "GLOB", "apply_patch", "Apply_Patch",
		"task", "Task", "subagent", "task_status", "Task_Result", "task_cancel", "task_message", "task_revive",
		"wait_for_user", "wait_for_background_tasks", "bash", "edit", "write", "webfetch", "ast_grep_search",
		"mcp_server_tool", "list", "todowrite"}
	for _, flavor := range []string{"v1", "v2"} {
		for _, tool := range tools {
			t.Run(flavor+"/"+tool, func(t *testing.T) {
				root := t.TempDir()
				h, taskCalls := planHarness(t, flavor, root)
				plan := h.d.Plan()
				phases := plan.Phases(strings.ToLower(tool))
				callArgs := map[string]any{
					"patchText": "*** Begin Patch\n*** Add File: ../outside.txt\n+x\n*** End Patch",
					"pattern":   "x", "path": filepath.Join(root, "missing"), "filePath": "a.go",
					"prompt": "p", "subagent_type": "explore", "task_id": "ses_1",
				}
				// Five identical results first, so that an identical
				// refusable call would now be refused.
				for i := 0; i < 5; i++ {
					id := "warm" + string(rune('0'+i))
					h.ran[id] = callArgs
					h.after(tool, "s", id, "same", "")
				}
				*taskCalls = 0
				state := snapshot(t, filepath.Dir(filepath.Dir(h.store.Dir())))
				check := func(phase protocol.Phase, r protocol.Response) {
					t.Helper()
					if !reflect.DeepEqual(r, pass()) {
						t.Errorf("%s is not in the plan (%v) but answered %+v", phase, phases, r)
					}
					if now := snapshot(t, filepath.Dir(filepath.Dir(h.store.Dir()))); !reflect.DeepEqual(now, state) {
						t.Errorf("%s is not in the plan (%v) but changed the state", phase, phases)
					}
					if *taskCalls != 0 {
						t.Errorf("%s is not in the plan (%v) but reached the task tools", phase, phases)
					}
				}
				if !slices.Contains(phases, protocol.Before) {
					_, r := h.before(tool, "s", callArgs)
					check(protocol.Before, r)
				}
				if !slices.Contains(phases, protocol.After) {
					h.ran["last"] = callArgs
					check(protocol.After, h.after(tool, "s", "last", "same", ""))
				}
			})
		}
	}
}

// The plan says what it must: a call the guards act on in a phase has
// that phase in the plan (the converse of the test above, for the calls
// that do get an answer).
func TestPlanListsThePhasesThatAnswer(t *testing.T) {
	root := t.TempDir()
	h, taskCalls := planHarness(t, "v1", root)
	plan := h.d.Plan()
	has := func(tool string, ph protocol.Phase) bool {
		return slices.Contains(plan.Phases(strings.ToLower(tool)), ph)
	}
	if _, r := h.before("apply_patch", "s", args("patchText", "*** Begin Patch\n*** Add File: ../x.txt\n+x\n*** End Patch")); r.Action != protocol.Block || !has("apply_patch", protocol.Before) {
		t.Errorf("apply_patch outside: %+v; plan %v", r, plan.Phases("apply_patch"))
	}
	if _, r := h.before("grep", "s", args("pattern", "x", "path", filepath.Join(root, "gone"))); r.Action != protocol.Block || !has("grep", protocol.Before) {
		t.Errorf("grep on a missing path: %+v", r)
	}
	rs := repeat(h, 6, "ReAd", "s", args("filePath", "a"), "same")
	if !rs[5].refused || !has("ReAd", protocol.Before) || !rs[2].notice || !has("ReAd", protocol.After) {
		t.Errorf("read: %+v", rs)
	}
	rs = repeat(h, 3, "some_mcp_tool", "s", args("q", "x"), "same")
	if !rs[2].notice || !has("some_mcp_tool", protocol.After) {
		t.Errorf("an unnamed tool: %+v", rs)
	}
	h.call("task", "s", args("prompt", "p"), "task_id: ses_x")
	if *taskCalls != 1 || !has("task", protocol.After) {
		t.Errorf("task: %d calls to the task tools", *taskCalls)
	}
}

// The plan's AfterChanges holds: an after whose call repeats no earlier
// call of its session answers a plain pass, for every tool and whatever
// the session holds (every guard on, the host's task tool included), so a
// plugin that does not wait for such an answer loses nothing.
func TestPlanAfterChangesOnlyRepeatedCalls(t *testing.T) {
	tools := []string{"read", "Read", "grep", "glob", "apply_patch", "task", "Task", "task_status", "bash",
		"edit", "write", "webfetch", "ast_grep_search", "mcp_server_tool", "todowrite"}
	for _, tool := range tools {
		t.Run(tool, func(t *testing.T) {
			root := t.TempDir()
			h, _ := planHarness(t, "v1", root)
			if got := h.d.Plan().AfterChanges; got != protocol.AfterChangesRepeats {
				t.Fatalf("AfterChanges = %q", got)
			}
			// A run of identical calls first, then eight calls in a row,
			// each with arguments of its own and all with the same result.
			for j := 0; j < 4; j++ {
				other := fmt.Sprint("other", j)
				h.ran[other] = args("filePath", "same")
				h.after(tool, "s", other, "same", "")
			}
			for i := 0; i < 8; i++ {
				a := args("filePath", fmt.Sprint("f", i), "command", fmt.Sprint("c", i), "prompt", "p", "subagent_type", "explore")
				id := fmt.Sprint("call", i)
				h.ran[id] = a
				if r := h.after(tool, "s", id, "same", ""); !reflect.DeepEqual(r, pass()) {
					t.Errorf("call %d, a first of its kind, answered %+v", i, r)
				}
			}
		})
	}
}

// planHarness is a harness with every guard wired (the task tools' calls
// counted in *taskCalls) for a host of flavor in the session directory
// root.
func planHarness(t *testing.T, flavor, root string) (*harness, *int) {
	t.Helper()
	h := newHarness(t)
	taskCalls := new(int)
	wired(h, taskCalls)
	host, _ := json.Marshal(map[string]string{"flavor": flavor, "platform": "linux", "directory": root, "worktree": root, "cwd": root})
	h.host = string(host)
	return h, taskCalls
}
