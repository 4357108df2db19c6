package tasks_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// pendingAbort launches a hanging task and cancels it with the abort
// held past the cancel's deadline: the settler keeps the cancellation
// lease until the hold named "abort" is released.
func (h *harness) pendingAbort() string {
	h.t.Helper()
	id := h.hangingJob("explorer", "x")
	h.hold("abort", "POST", "/session/*/abort", 0, 1)
	o := h.toolPastDeadline("cancel", map[string]any{"task_id": id}, "abort", "SLIM_TASKS_ABORT_TIMEOUT_MS", "300")
	wantOut(h.t, o, 0, cancelText(id, "running", "Session abort timed out after 300ms"), "")
	return id
}

func TestLeaseInspectListsEveryLeaseWithItsOpAndJob(t *testing.T) {
	h := newHarness(t)
	o := h.operator([]string{"lease", "inspect"})
	if o.code != 0 || !strings.HasSuffix(o.stdout, "\nno leases\n") || !strings.HasPrefix(o.stdout, "store: ") {
		t.Fatal(o)
	}
	id := h.pendingAbort()

	o = h.operator([]string{"lease", "inspect"}, "--json")
	if o.code != 0 || o.stderr != "" {
		t.Fatal(o)
	}
	var in tasks.Inspection
	if err := json.Unmarshal([]byte(o.stdout), &in); err != nil {
		t.Fatalf("lease inspect --json printed %q: %v", o.stdout, err)
	}
	if filepath.Dir(filepath.Dir(filepath.Dir(in.Store))) != h.state || filepath.Base(in.Store) != store.DocumentName {
		t.Fatalf("store %q is not this scope's document under %s", in.Store, h.state)
	}
	if len(in.Leases) != 1 {
		t.Fatalf("leases %+v", in.Leases)
	}
	li := in.Leases[0]
	if li.Lease.TaskID != id || li.Lease.Kind != store.LeaseCancellation || li.Lease.State != store.LeaseHeld {
		t.Fatalf("lease %+v", li.Lease)
	}
	if alive, err := owner.Alive(li.Lease.Owner); err != nil || !alive {
		t.Fatalf("the listed owner %s is not the live settler", li.Lease.Owner)
	}
	if li.Op == nil || li.Op.ID != li.Lease.OpID || li.Op.Kind != store.OpAbort || li.Op.Phase != store.PhaseSentUnknown || !li.Op.CallerAnswered {
		t.Fatalf("the lease's op %+v", li.Op)
	}
	if li.Job == nil || li.Job.TaskID != id || li.Job.State != store.JobRunning || !li.Job.StatusUncertain {
		t.Fatalf("the lease's job %+v", li.Job)
	}
	kinds := map[store.OpKind]store.Phase{}
	for _, op := range in.Ops {
		kinds[op.Kind] = op.Phase
	}
	if len(in.Ops) != 2 || kinds[store.OpLaunch] != store.PhaseSettled || kinds[store.OpAbort] != store.PhaseSentUnknown {
		t.Fatalf("ops %+v", in.Ops)
	}

	o = h.operator([]string{"lease", "inspect"})
	l := li.Lease
	wantLines(t, o,
		"store: "+in.Store+"\n",
		"lease "+id+": cancellation, held, generation "+itoa(int(l.Generation))+", owner "+l.Owner.String()+"; op abort sent_unknown\n",
		"op "+l.OpID+": abort for "+id+", sent_unknown, owner "+l.Owner.String()+"\n")
	if strings.Contains(o.stdout, "op launch") || strings.Contains(o.stdout, ": launch for") {
		t.Fatalf("the text form lists settled ops: %s", o)
	}
	h.release("abort", nil)
	waitGone(t, l.Owner)
}

func TestLeaseBreakRefusesALiveOwnersLeaseWithoutForce(t *testing.T) {
	h := newHarness(t)
	id := h.pendingAbort()
	l := h.doc().Leases[id]
	o := h.operator([]string{"lease", "break"}, "--task", id)
	wantOut(t, o, 2, "", "slim: task "+id+"'s cancellation lease is held by a live owner ("+l.Owner.String()+"); pass --force to break it anyway\n")
	if got := h.doc().Leases[id]; got == nil || got.Token != l.Token {
		t.Fatalf("a refused break changed the lease: %+v", got)
	}

	o = h.operator([]string{"lease", "break"}, "--task", id, "--force", "--json")
	var broken store.Lease
	if err := json.Unmarshal([]byte(o.stdout), &broken); o.code != 0 || err != nil || broken.Token != l.Token || broken.Kind != store.LeaseCancellation {
		t.Fatalf("lease break --json: %s (%v)", o, err)
	}
	st := h.doc()
	if st.Leases[id] != nil {
		t.Fatalf("lease after the break: %+v", st.Leases[id])
	}
	if j := st.Job(id); j.State != store.JobRunning || !j.StatusUncertain || j.LastStatusError != "a cancellation lease was broken by an operator" {
		t.Fatalf("job after the break: %+v", j)
	}
	wantBroken := func(when string) {
		t.Helper()
		if op := h.doc().Ops[l.OpID]; op.Phase != store.PhaseRejected || op.Outcome != store.OutcomeOrphaned || op.Error != "lease broken by an operator" {
			t.Fatalf("op %s: %+v", when, op)
		}
	}
	wantBroken("after the break")

	// The broken abort settles late: its record stays the operator's,
	// and nothing it does reaches the task.
	settler := l.Owner
	h.release("abort", nil)
	waitGone(t, settler)
	wantBroken("after the late settlement")
	if st := h.doc(); st.Leases[id] != nil || st.Job(id).State != store.JobRunning {
		t.Fatalf("the late settlement changed the task: lease %+v, job %+v", st.Leases[id], st.Job(id))
	}
	wantOut(t, h.tool("cancel", map[string]any{"task_id": id}), 0, cancelText(id, "cancelled", "cancelled"), "")
}

func TestLeaseBreakNeedsATaskWithALease(t *testing.T) {
	h := newHarness(t)
	id := h.launch("explorer", "x")
	wantOut(t, h.operator([]string{"lease", "break"}, "--task", id), 2, "", "slim: task "+id+" has no lease\n")
	o := h.operator([]string{"lease", "break"})
	if o.code != 2 || !strings.Contains(o.stderr, `Required flag "task" not set`) {
		t.Fatal(o)
	}
	o = h.operator([]string{"lease", "break"}, "--task", "ses_none", "--json")
	if o.code != 2 || !strings.Contains(o.stdout, `"message":"task ses_none has no lease"`) {
		t.Fatal(o)
	}
}

// The board shows how long each running task has run and when the host
// last showed it busy, so that the orchestrator does not cancel a live
// task for want of evidence; a reconcile records a busy sighting.
func TestTheBoardShowsHowLongEachRunningTaskRanAndWhenItWasLastSeenBusy(t *testing.T) {
	h := newHarness(t)
	live := h.hangingJob("explorer", "map auth")
	quiet := h.hangingJob("fixer", "fix login")
	h.mutate(func(st *store.State) error {
		now := time.Now()
		a, b := st.Job(live), st.Job(quiet)
		a.RunStartedAt, a.LastLiveBusyAt = now.Add(-90*time.Second), now.Add(-30*time.Second)
		b.RunStartedAt, b.LastLiveBusyAt = now.Add(-3*time.Hour), time.Time{}
		return nil
	})
	o := h.operator([]string{"board"}, "--parent", parent)
	if o.code != 0 {
		t.Fatal(o)
	}
	for _, re := range []string{
		`(?m)^- exp-1 / ` + live + ` / explorer / running\n  Objective: map auth\n  Running for: 1m3[01]s; last seen busy 3[01]s ago$`,
		`(?m)^- fix-1 / ` + quiet + ` / fixer / running\n  Objective: fix login\n  Running for: 3h0m[01]s; not yet seen busy$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Fatalf("board does not match %s:\n%s", re, o.stdout)
		}
	}
	// Both run at the host: one observation pass records it, and the
	// board says so.
	o = h.operator([]string{"reconcile"}, "--parent", parent)
	if o.code != 0 {
		t.Fatal(o)
	}
	for _, re := range []string{
		`(?m)^  Running for: 1m3[0-2]s; last seen busy [01]s ago$`,
		`(?m)^  Running for: 3h0m[0-2]s; last seen busy [01]s ago$`,
	} {
		if !regexp.MustCompile(re).MatchString(o.stdout) {
			t.Fatalf("board after the reconcile does not match %s:\n%s", re, o.stdout)
		}
	}
}
