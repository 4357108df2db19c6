package tasks_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/slimgate/slim/fixtures/opencodefake"
	"github.com/slimgate/slim/tasks/internal/store"
)

// runningJobs registers n running jobs of the parent, launched a
// millisecond apart, each with a session at the host whose run has not
// answered (idle, so each observation reads its transcript).
func (h *harness) runningJobs(n int) []string {
	h.t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("ses_fair%02d", i)
		if _, err := h.fake.AddSession(opencodefake.SessionSeed{ID: id, ParentID: parent,
			Messages: []opencodefake.Message{{Info: opencodefake.MessageInfo{Role: "user"}, Parts: []opencodefake.Part{{Type: "text", Text: "work"}}}}}); err != nil {
			h.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	h.mutate(func(st *store.State) error {
		base := time.Now().Add(-time.Minute)
		for i, id := range ids {
			at := base.Add(time.Duration(i) * time.Millisecond)
			st.Live[id] = &store.Job{TaskID: id, ParentSessionID: parent, Agent: "explorer", Description: "job " + id,
				Alias: fmt.Sprintf("exp-%d", i+1), State: store.JobRunning, Generation: st.NextGeneration(), TaskGeneration: 1,
				Background: true, LaunchedAt: at, LastLaunchedAt: at, RunStartedAt: at, UpdatedAt: at}
		}
		st.AliasCounters[store.AliasKey(parent, "exp")] = int64(len(ids))
		return nil
	})
	return ids
}

// passLooksAt runs one whole-parent pass and returns the sessions whose
// transcripts it read.
func (h *harness) passLooksAt() map[string]bool {
	h.t.Helper()
	before := h.lastSeq()
	if o := h.operator([]string{"reconcile"}, "--parent", parent); o.code != 0 {
		h.t.Fatal(o)
	}
	seen := map[string]bool{}
	for _, c := range h.after(before, "GET", "/session/*/message") {
		seen[c.Path[len("/session/"):len(c.Path)-len("/message")]] = true
	}
	return seen
}

// A board larger than one pass's bound (16) is covered in turn: each pass
// takes the least recently observed jobs, so none waits more than
// ceil(n/16) passes.
func TestAPassBeyondItsBoundTakesTheLeastRecentlyObservedFirst(t *testing.T) {
	h := newHarness(t)
	ids := h.runningJobs(20)
	first := h.passLooksAt()
	if len(first) != 16 {
		t.Fatalf("the first pass looked at %d jobs, want 16: %v", len(first), first)
	}
	for _, id := range ids[:16] {
		if !first[id] || h.job(id).LastObservedAt.IsZero() {
			t.Fatalf("the first pass skipped %s (the oldest launched go first)", id)
		}
	}
	second := h.passLooksAt()
	if len(second) != 16 {
		t.Fatalf("the second pass looked at %d jobs, want 16", len(second))
	}
	for _, id := range ids[16:] {
		if !second[id] {
			t.Fatalf("the second pass skipped %s, which the first never looked at: %v", id, second)
		}
	}
	// The other twelve are the first pass's oldest launched.
	for _, id := range ids[:12] {
		if !second[id] {
			t.Fatalf("the second pass skipped %s: %v", id, second)
		}
	}
	third := h.passLooksAt()
	for _, id := range ids[12:16] {
		if !third[id] {
			t.Fatalf("the third pass skipped %s, the least recently observed: %v", id, third)
		}
	}
}

// A pass that looks at every job records no observation time: the order
// does not matter then, and the record is not rewritten for it.
func TestAPassWithinItsBoundRecordsNoObservationTime(t *testing.T) {
	h := newHarness(t)
	ids := h.runningJobs(16)
	if seen := h.passLooksAt(); len(seen) != 16 {
		t.Fatalf("the pass looked at %d jobs, want all 16", len(seen))
	}
	for _, id := range ids {
		if !h.job(id).LastObservedAt.IsZero() {
			t.Fatalf("%s has an observation time from a pass that looked at every job", id)
		}
	}
}
