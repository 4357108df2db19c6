package tasks

import (
	"fmt"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/store"
)

func TestRetentionEvictsTheOldestAcknowledgedJobsOnly(t *testing.T) {
	st := store.NewState()
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	// MaxRetainedJobs+10 finished, acknowledged jobs, the first ones the
	// oldest; one old unacknowledged, one old uncertain, one old leased.
	for i := 0; i < MaxRetainedJobs+10; i++ {
		j := registerLaunch(st, newJob{TaskID: fmt.Sprintf("ses_done%04d", i), Parent: "ses_p", Agent: "explorer"}, t0)
		markTerminal(j, j.Generation, store.JobCompleted, "r", t0.Add(time.Duration(i)*time.Minute))
		acknowledge(j, j.Generation, t0.Add(time.Duration(i)*time.Minute))
	}
	keep := []string{"ses_unread", "ses_unsure", "ses_leased"}
	for _, id := range keep {
		j := registerLaunch(st, newJob{TaskID: id, Parent: "ses_p", Agent: "explorer"}, t0)
		markTerminal(j, j.Generation, store.JobCompleted, "r", t0.Add(-time.Hour))
		switch id {
		case "ses_unsure":
			acknowledge(j, j.Generation, t0.Add(-time.Hour))
			j.StatusUncertain = true
		case "ses_leased":
			acknowledge(j, j.Generation, t0.Add(-time.Hour))
			if _, err := st.AcquireLease(store.LeaseRequest{TaskID: id, Kind: store.LeaseRelaunch, Token: "t", Generation: j.Generation}, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	registerLaunch(st, newJob{TaskID: "ses_new", Parent: "ses_p", Agent: "explorer"}, t0.Add(24*time.Hour))
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("ses_done%04d", i)
		if st.Job(id) != nil {
			t.Fatalf("%s, among the oldest, was kept", id)
		}
		if ts := st.Tombstone(id); ts == nil || ts.LastTerminal == nil || ts.LastTerminal.State != store.JobCompleted {
			t.Fatalf("%s left tombstone %+v", id, ts)
		}
	}
	for i := 10; i < MaxRetainedJobs+10; i++ {
		if st.Job(fmt.Sprintf("ses_done%04d", i)) == nil {
			t.Fatalf("ses_done%04d, within the bound, was evicted", i)
		}
	}
	for _, id := range append(keep, "ses_new") {
		if st.Job(id) == nil {
			t.Fatalf("%s was evicted", id)
		}
	}
}
