package tasks

import (
	"context"
	"sort"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// maxObserved bounds the jobs one pass looks at, so a call's cost does
// not grow with the board.
const maxObserved = 16

// jobObs is what a pass learned about one job outside the lock, with the
// generation it was learned under.
type jobObs struct {
	taskID  string
	gen     int64
	live    liveObs
	outcome *opencode.Outcome // the run's terminal answer, when found
	gone    bool              // the host no longer knows the session
	// unread is why the transcript of a session the map shows idle could
	// not be read: then nothing says whether the run finished.
	unread string
	// turn: the pass could not look at all the parent's jobs, so it
	// records that it looked at this one (see gather).
	turn bool
}

// orphanObs is evidence about an orphaned lease: whether the client
// message of an orphaned revive is in the child's transcript.
type orphanObs struct {
	taskID, token string
	found         bool
	baseline      string
}

// needsObservation reports whether a pass should look at j.
func needsObservation(j *store.Job) bool {
	return j.State == store.JobRunning || (j.State == store.JobStopped && j.TerminalUnreconciled)
}

// observe gathers what the host says about the parent's live jobs (all
// of them, or only the one named by only) from one snapshot and, for
// those not busy, their transcripts. It holds no lock.
func (e *engine) observe(ctx context.Context, parent, only string, snap snapshot) ([]jobObs, []orphanObs, error) {
	var g gathered
	if err := e.view(func(st *store.State) error {
		g = gather(st, parent, only)
		return nil
	}); err != nil {
		return nil, nil, err
	}
	obs, orphans := e.observeGathered(ctx, g, snap)
	return obs, orphans, nil
}

// gathered is what a pass takes from the store before it asks the host:
// the jobs to look at and the orphaned revives whose evidence to seek.
type gathered struct {
	targets []store.Job
	orphans []store.Op
	// cancels are the sessions of orphaned cancels, which the pass
	// settles from the snapshot: on a v2 host each is probed first.
	cancels []string
	// turns: there were more jobs to look at than one pass looks at.
	turns bool
}

// gather collects, in the caller's read of the store, the parent's jobs
// a pass looks at (all of them, or only the one named by only) and its
// orphaned revives.
//
// A pass looks at no more than maxObserved jobs. When there are more, it
// takes the least recently observed first (the oldest launched among
// equals) and records when it looked at each, so the next pass starts
// where this one stopped and every job is reached in turn. A pass that
// looks at them all records nothing: the order does not matter then, and
// a pass that learns nothing new writes nothing.
func gather(st *store.State, parent, only string) gathered {
	var g gathered
	// A job that needs observation is never settled, so never archived.
	var due []*store.Job
	for _, j := range liveJobsOf(st, parent) {
		if (only == "" || j.TaskID == only) && needsObservation(j) {
			due = append(due, j)
		}
	}
	if len(due) > maxObserved {
		sort.SliceStable(due, func(a, b int) bool { return due[a].LastObservedAt.Before(due[b].LastObservedAt) })
		due, g.turns = due[:maxObserved], true
	}
	for _, j := range due {
		g.targets = append(g.targets, *j)
	}
	for _, l := range st.Leases {
		if l.State == store.LeaseOrphaned && l.Kind == store.LeaseCancellation && len(g.cancels) < maxObserved {
			if j := st.Job(l.TaskID); j != nil && j.ParentSessionID == parent {
				g.cancels = append(g.cancels, l.TaskID)
			}
		}
		if l.State != store.LeaseOrphaned || l.Kind != store.LeaseRelaunch {
			continue
		}
		if op := st.Ops[l.OpID]; op != nil && op.ClientMessageID != "" && op.LeaseToken == l.Token {
			if j := st.Job(l.TaskID); j != nil && j.ParentSessionID == parent && len(g.orphans) < maxObserved {
				// Each costs a transcript read: they count against the
				// same bound as the jobs.
				g.orphans = append(g.orphans, *op)
			}
		}
	}
	return g
}

// observeGathered asks the host about what gather collected. It holds no
// lock.
func (e *engine) observeGathered(ctx context.Context, g gathered, snap snapshot) ([]jobObs, []orphanObs) {
	var out []jobObs
	// Every session is looked up in the snapshot before any transcript
	// is read: on a v2 host those are probes that share one deadline,
	// which transcript reads must not use up.
	for _, j := range g.targets {
		snap.observe(j.TaskID)
	}
	for _, j := range g.targets {
		o := jobObs{taskID: j.TaskID, gen: j.Generation, live: snap.observe(j.TaskID), turn: g.turns}
		if o.live.absent {
			rctx, cancel := e.readCtx(ctx)
			msgs, err := e.host.Messages(rctx, j.TaskID, 0)
			cancel()
			switch {
			case err == nil:
				if j.BaselineMessageID == "" || opencode.HasID(msgs, j.BaselineMessageID) {
					if oc := opencode.Judge(opencode.After(msgs, j.BaselineMessageID)); oc.Done {
						o.outcome = &oc
					}
				}
			case isNotFound(err):
				o.gone = true
			default:
				o.unread = "the transcript could not be read: " + err.Error()
			}
		}
		out = append(out, o)
	}
	for _, id := range g.cancels {
		snap.observe(id) // kept in the snapshot for apply (a v2 probe)
	}
	var ev []orphanObs
	for _, op := range g.orphans {
		rctx, cancel := e.readCtx(ctx)
		msgs, err := e.host.Messages(rctx, op.TaskID, 0)
		cancel()
		if err != nil {
			continue
		}
		o := orphanObs{taskID: op.TaskID, token: op.LeaseToken}
		for i, m := range msgs {
			if m.Info.ID == op.ClientMessageID {
				o.found = true
				if i > 0 {
					o.baseline = msgs[i-1].Info.ID
				}
			}
		}
		ev = append(ev, o)
	}
	return out, ev
}

// apply commits a pass's observations, each only to the generation it
// was made under, and settles what dead owners left behind.
//
// It returns the runs slim started that it recorded as ended, whose
// parent is to be told (see notify.go).
func (e *engine) apply(st *store.State, obs []jobObs, orphans []orphanObs, snap snapshot) []notice {
	now := e.now()
	var ns []notice
	for _, o := range obs {
		j := st.Job(o.taskID)
		if j == nil || j.Generation != o.gen {
			continue
		}
		if o.turn && !o.live.unprobed {
			// A job the pass had no time to ask about keeps its place.
			j.LastObservedAt = snap.at
		}
		switch {
		case o.gone:
			drop(st, j.TaskID, "session deleted", now)
		case o.outcome != nil && o.outcome.Error != "" && cancelling(st, j):
			// The run ended because a cancel aborted it: the cancel
			// (its verification, or the evidence for an orphaned one)
			// records it as cancelled, not as failed.
			markUncertain(j, o.gen, "the run was aborted; its cancel is not settled yet", now)
		case o.outcome != nil && o.outcome.Error != "":
			markTerminal(j, o.gen, store.JobError, o.outcome.Error, now)
		case o.outcome != nil:
			markTerminal(j, o.gen, store.JobCompleted, o.outcome.Text, now)
		case snap.at.Before(j.RunStartedAt):
			// The map was read before this run started: it says nothing
			// about it.
		case o.live.known():
			markLiveBusy(j, o.gen, snap.at)
		case o.live.absent && o.unread != "":
			// Idle, but the answer could not be looked for: not a stop.
			markUncertain(j, o.gen, o.unread, now)
		case o.live.absent:
			markNotBusy(j, o.gen, snap.at, e.t.StopGrace)
		default:
			markUncertain(j, o.gen, o.live.err, now)
		}
		if o.outcome != nil && !e.cfg.NoNotify && owesNotice(st, j) {
			ns = append(ns, notice{TaskID: j.TaskID, Generation: j.Generation, TerminalRevision: j.TerminalRevision})
		}
	}
	st.ReapDeadOwners(owner.Alive, now)
	for _, op := range st.Ops {
		// A launch or a wake whose sender died after sending protects
		// nothing (neither has a lease), and a launch's doubt is on its
		// job: settle it, so the journal can prune it.
		if (op.Kind == store.OpLaunch || op.Kind == store.OpWake) && op.Phase == store.PhaseOrphaned {
			op.Phase, op.SettledAt = store.PhaseSettled, now
		}
	}
	for _, o := range orphans {
		l := st.Leases[o.taskID]
		if l == nil || l.Token != o.token || l.State != store.LeaseOrphaned || !o.found {
			continue
		}
		// The host holds the revive's own message: the prompt was
		// admitted, so the new run is registered as a late acceptance.
		op := st.Ops[l.OpID]
		if j := st.Job(o.taskID); j != nil && j.Generation == l.Generation {
			relaunch(st, j, o.baseline, now)
		}
		if op != nil {
			op.Phase, op.Outcome, op.SettledAt = store.PhaseSettled, store.OutcomeAccepted, now
			op.Error = "admitted (its message was found in the transcript after its owner exited)"
		}
		delete(st.Leases, o.taskID)
	}
	for _, l := range st.Leases {
		if l.State != store.LeaseOrphaned || l.Kind != store.LeaseCancellation {
			continue
		}
		// An orphaned cancel is resolved by a valid map showing the
		// session idle: the cancel is then committed as verified.
		if ob := snap.peek(l.TaskID); ob.absent {
			if j := st.Job(l.TaskID); j != nil && j.State == store.JobRunning {
				markCancelled(j, l.Generation, "", now)
			}
			if op := st.Ops[l.OpID]; op != nil && !op.Phase.Final() {
				op.Phase, op.Outcome, op.SettledAt = store.PhaseSettled, store.OutcomeAccepted, now
			}
			delete(st.Leases, l.TaskID)
		}
	}
	st.PruneOps(now, 24*time.Hour)
	return ns
}

// reconcile runs one bounded pass for the parent (or one of its jobs)
// from snap and commits it.
func (e *engine) reconcile(ctx context.Context, parent, only string, snap snapshot) error {
	obs, orphans, err := e.observe(ctx, parent, only, snap)
	if err != nil {
		return err
	}
	_, err = e.commit(obs, orphans, snap, "")
	return err
}

// commit applies a pass's observations in one transaction and returns a
// copy of the job taskID as the transaction left it (nil when it is gone
// or not asked for), so the caller need not read the store again.
func (e *engine) commit(obs []jobObs, orphans []orphanObs, snap snapshot, taskID string) (*store.Job, error) {
	var out *store.Job
	var ns []notice
	err := e.update(func(st *store.State) error {
		ns = e.apply(st, obs, orphans, snap)
		if j := st.Job(taskID); j != nil && taskID != "" {
			c := *j
			out = &c
		}
		return nil
	})
	if err == nil {
		e.startNotifiers(ns)
	}
	return out, err
}

// cancelling reports whether a cancel of the job's run holds its lease.
func cancelling(st *store.State, j *store.Job) bool {
	l := st.Leases[j.TaskID]
	return l != nil && l.Kind == store.LeaseCancellation && l.Generation == j.Generation
}

func isNotFound(err error) bool {
	oe, ok := opencode.AsError(err)
	return ok && oe.Kind == opencode.NotFound
}
