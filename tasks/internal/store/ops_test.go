package store

import (
	"errors"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// captured returns a state after the capture step: generation 1, a held
// relaunch lease on ses_a owned by alice and its op, prepared.
func captured(t *testing.T) *State {
	t.Helper()
	s := NewState()
	s.NextGeneration()
	if _, err := s.AddOp(OpRequest{ID: "op1", Kind: OpReviveAdmission, TaskID: "ses_a", Generation: 1, LeaseToken: "tok-a", ClientMessageID: "msg_1", Owner: alice, LocalDeadlineAt: t0.Add(10 * time.Second)}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLease(LeaseRequest{TaskID: "ses_a", Kind: LeaseRelaunch, Token: "tok-a", Generation: 1, OpID: "op1", Owner: alice}, t0); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestThePhasesThatMayFollowEachPhase(t *testing.T) {
	all := []Phase{PhasePrepared, PhaseSentUnknown, PhaseAccepted, PhaseRejected, PhaseCompensating, PhaseSettled, PhaseQuarantined, PhaseOrphaned}
	allowed := map[[2]Phase]bool{
		{PhasePrepared, PhaseSentUnknown}:     true,
		{PhasePrepared, PhaseRejected}:        true, // failed before the send
		{PhaseSentUnknown, PhaseAccepted}:     true,
		{PhaseSentUnknown, PhaseRejected}:     true, // an authoritative 4xx
		{PhaseSentUnknown, PhaseOrphaned}:     true,
		{PhaseSentUnknown, PhaseQuarantined}:  true,
		{PhaseSentUnknown, PhaseSettled}:      true, // an unknown outcome the job records
		{PhaseAccepted, PhaseSettled}:         true,
		{PhaseAccepted, PhaseCompensating}:    true,
		{PhaseCompensating, PhaseSettled}:     true, // quiescence verified
		{PhaseCompensating, PhaseQuarantined}: true,
		{PhaseOrphaned, PhaseAccepted}:        true, // a late acceptance found
		{PhaseOrphaned, PhaseRejected}:        true, // an operator confirms it was not admitted
		{PhaseOrphaned, PhaseSettled}:         true,
		{PhaseOrphaned, PhaseQuarantined}:     true,
		{PhaseQuarantined, PhaseRejected}:     true, // operator only
		{PhaseQuarantined, PhaseSettled}:      true,
	}
	for _, from := range all {
		for _, to := range all {
			if got := CanAdvance(from, to); got != allowed[[2]Phase{from, to}] {
				t.Errorf("CanAdvance(%s, %s) = %v", from, to, got)
			}
		}
		if from.Final() != (from == PhaseRejected || from == PhaseSettled) {
			t.Errorf("%s.Final() = %v", from, from.Final())
		}
	}
	if CanAdvance("done", PhaseSettled) || CanAdvance(PhasePrepared, "done") {
		t.Error("an unknown phase advanced")
	}
}

func TestAddOpJournalsAPreparedWrite(t *testing.T) {
	s := captured(t)
	op := s.Ops["op1"]
	want := Op{ID: "op1", Kind: OpReviveAdmission, TaskID: "ses_a", Generation: 1, LeaseToken: "tok-a", Phase: PhasePrepared,
		ClientMessageID: "msg_1", Owner: alice, CreatedAt: t0, LocalDeadlineAt: t0.Add(10 * time.Second)}
	if *op != want {
		t.Fatalf("op %+v, want %+v", *op, want)
	}
	for name, req := range map[string]OpRequest{
		"no ID":                   {Kind: OpMessage, TaskID: "a"},
		"unknown kind":            {ID: "x", Kind: "delete", TaskID: "a"},
		"no task":                 {ID: "x", Kind: OpMessage},
		"a generation not issued": {ID: "x", Kind: OpMessage, TaskID: "a", Generation: 2},
	} {
		if _, err := s.AddOp(req, t0); !is(err, Refused, CodeBadOp) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if _, err := s.AddOp(OpRequest{ID: "op1", Kind: OpMessage, TaskID: "b"}, t0); !is(err, Refused, CodeOpExists) {
		t.Errorf("a duplicate ID: err = %v", err)
	}
	if _, err := s.AddOp(OpRequest{ID: "launch", Kind: OpLaunch}, t0); err != nil {
		t.Errorf("a launch before its session exists: %v", err)
	}
	if s.Ops["op1"].Kind != OpReviveAdmission {
		t.Fatal("a refused AddOp replaced the op")
	}
}

func TestMarkSentAppliesTheSendRule(t *testing.T) {
	t1 := t0.Add(time.Second)
	ok := captured(t)
	op, err := ok.MarkSent("op1", alice, t1)
	if err != nil || op.Phase != PhaseSentUnknown || !op.SentAt.Equal(t1) {
		t.Fatalf("MarkSent = %+v, %v", op, err)
	}
	if _, err := ok.MarkSent("op1", alice, t1); !is(err, Refused, CodeOpPhase) {
		t.Fatalf("a second send: err = %v", err)
	}
	for _, c := range []struct {
		name  string
		self  owner.Identity
		setup func(*State)
		code  string
	}{
		{"another process", bob, func(*State) {}, CodeLeaseNotOwner},
		{"no such op", alice, func(s *State) { delete(s.Ops, "op1") }, CodeOpMissing},
		{"the lease released", alice, func(s *State) { delete(s.Leases, "ses_a") }, CodeLeaseStale},
		{"the lease replaced", alice, func(s *State) { s.Leases["ses_a"].Token = "tok-b" }, CodeLeaseStale},
		{"the lease orphaned", alice, func(s *State) { s.Leases["ses_a"].State = LeaseOrphaned }, CodeLeaseStale},
		{"the lease for another run", alice, func(s *State) { s.NextGeneration(); s.Leases["ses_a"].Generation = 2 }, CodeLeaseStale},
		{"the lease handed to another process", alice, func(s *State) { s.Leases["ses_a"].Owner = bob }, CodeLeaseNotOwner},
		{"already rejected", alice, func(s *State) { s.Ops["op1"].Phase = PhaseRejected }, CodeOpPhase},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := captured(t)
			c.setup(s)
			_, err := s.MarkSent("op1", c.self, t1)
			if !is(err, Refused, c.code) {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
			if op := s.Ops["op1"]; op != nil && op.Phase == PhaseSentUnknown {
				t.Fatal("a refused send marked the op sent")
			}
		})
	}
	// An op that no lease protects only needs its owner.
	s := NewState()
	s.AddOp(OpRequest{ID: "l", Kind: OpLaunch, Owner: alice}, t0)
	if _, err := s.MarkSent("l", alice, t1); err != nil {
		t.Fatalf("a launch: %v", err)
	}
}

func TestASendIsMarkedInTheSameTransactionAsTheLastCheck(t *testing.T) {
	// The send rule through the store: the revalidation fails, so the
	// whole transaction (MarkSent included) is not written and the op is
	// still prepared for everyone else.
	s := openT(t, Options{})
	if err := s.Update(func(st *State) error { *st = *captured(t); return nil }); err != nil {
		t.Fatal(err)
	}
	errGone := errors.New("the record is gone")
	err := s.Update(func(st *State) error {
		if _, err := st.MarkSent("op1", alice, t0); err != nil {
			return err
		}
		return errGone // e.g. the job was deleted meanwhile
	})
	if err != errGone {
		t.Fatal(err)
	}
	s.View(func(st *State) error {
		if p := st.Ops["op1"].Phase; p != PhasePrepared {
			t.Fatalf("phase %s after a failed revalidation, want prepared", p)
		}
		return nil
	})
	if err := s.Update(func(st *State) error { _, err := st.MarkSent("op1", alice, t0); return err }); err != nil {
		t.Fatal(err)
	}
	s.View(func(st *State) error {
		if p := st.Ops["op1"].Phase; p != PhaseSentUnknown {
			t.Fatalf("phase %s after the send was marked, want sent_unknown", p)
		}
		return nil
	})
}

func TestHandOffOpMovesTheOpAndItsLeaseTogether(t *testing.T) {
	s := captured(t)
	if err := s.HandOffOp("op1", alice, bob); err != nil {
		t.Fatal(err)
	}
	if !s.Ops["op1"].Owner.Same(bob) || !s.Leases["ses_a"].Owner.Same(bob) {
		t.Fatalf("op owner %v, lease owner %v", s.Ops["op1"].Owner, s.Leases["ses_a"].Owner)
	}
	if _, err := s.MarkSent("op1", bob, t0); err != nil {
		t.Fatalf("the new owner sends: %v", err)
	}
	for _, c := range []struct {
		name  string
		from  owner.Identity
		setup func(*State)
		code  string
	}{
		{"from a process that does not own it", bob, func(*State) {}, CodeLeaseNotOwner},
		{"no such op", alice, func(s *State) { delete(s.Ops, "op1") }, CodeOpMissing},
		{"a settled op", alice, func(s *State) { s.Ops["op1"].Phase = PhaseSettled }, CodeOpPhase},
		{"the lease released", alice, func(s *State) { delete(s.Leases, "ses_a") }, CodeLeaseStale},
		{"the lease another's", alice, func(s *State) { s.Leases["ses_a"].Token = "tok-b" }, CodeLeaseStale},
		{"the lease orphaned", alice, func(s *State) { s.Leases["ses_a"].State = LeaseOrphaned }, CodeLeaseStale},
		{"the lease owned by a third process", alice, func(s *State) { s.Leases["ses_a"].Owner = owner.Identity{PID: 9} }, CodeLeaseNotOwner},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := captured(t)
			c.setup(s)
			if err := s.HandOffOp("op1", c.from, bob); !is(err, Refused, c.code) {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
			if op := s.Ops["op1"]; op != nil && op.Owner.Same(bob) {
				t.Fatal("the refused hand-off moved the op")
			}
			if l := s.Leases["ses_a"]; l != nil && l.Owner.Same(bob) {
				t.Fatal("the refused hand-off moved the lease")
			}
		})
	}
}

func TestAdvanceOpRecordsTheOutcome(t *testing.T) {
	s := captured(t)
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	if _, err := s.AdvanceOp("op1", PhaseAccepted, OutcomeAccepted, "", t1); !is(err, Refused, CodeOpPhase) {
		t.Fatalf("prepared straight to accepted: %v", err)
	}
	s.MarkSent("op1", alice, t1)
	op, err := s.AdvanceOp("op1", PhaseAccepted, OutcomeAccepted, "", t1)
	if err != nil || op.Phase != PhaseAccepted || op.Outcome != OutcomeAccepted || !op.SettledAt.IsZero() {
		t.Fatalf("accepted: %+v, %v", op, err)
	}
	if _, err := s.AdvanceOp("op1", PhaseSettled, "bogus", "", t2); !is(err, Refused, CodeBadOp) {
		t.Fatalf("an unknown outcome: %v", err)
	}
	op, err = s.AdvanceOp("op1", PhaseSettled, "", "note", t2)
	if err != nil || op.Phase != PhaseSettled || op.Outcome != OutcomeAccepted || op.Error != "note" || !op.SettledAt.Equal(t2) {
		t.Fatalf("settled: %+v, %v", op, err)
	}
	if _, err := s.AdvanceOp("op1", PhaseCompensating, "", "", t2); !is(err, Refused, CodeOpPhase) {
		t.Fatalf("past settled: %v", err)
	}
	if _, err := s.AdvanceOp("nope", PhaseSettled, "", "", t2); !is(err, Refused, CodeOpMissing) {
		t.Fatalf("a missing op: %v", err)
	}
	// A rejection is final too: settled at once, never sent.
	r := captured(t)
	op, err = r.AdvanceOp("op1", PhaseRejected, OutcomeNotSent, "the record is gone", t2)
	if err != nil || op.Phase != PhaseRejected || op.Outcome != OutcomeNotSent || !op.SettledAt.Equal(t2) || !op.SentAt.IsZero() {
		t.Fatalf("rejected before the send: %+v, %v", op, err)
	}
}

func TestPruneOpsDropsOnlyOldFinalOps(t *testing.T) {
	s := NewState()
	add := func(id string, p Phase, settled time.Time) {
		s.Ops[id] = &Op{ID: id, Kind: OpMessage, TaskID: "a", Phase: p, SettledAt: settled}
	}
	day := 24 * time.Hour
	now := t0.Add(10 * day)
	add("old-settled", PhaseSettled, now.Add(-25*time.Hour))
	add("old-rejected", PhaseRejected, now.Add(-25*time.Hour))
	add("young-settled", PhaseSettled, now.Add(-23*time.Hour))
	for _, p := range []Phase{PhasePrepared, PhaseSentUnknown, PhaseAccepted, PhaseCompensating, PhaseQuarantined, PhaseOrphaned} {
		add("old-"+string(p), p, now.Add(-100*day)) // unsettled, however old
	}
	if n := s.PruneOps(now, day); n != 2 {
		t.Fatalf("pruned %d, want 2", n)
	}
	if s.Ops["old-settled"] != nil || s.Ops["old-rejected"] != nil || s.Ops["young-settled"] == nil || len(s.Ops) != 7 {
		t.Fatalf("left %d ops", len(s.Ops))
	}
}

func TestReapDeadOwnersSettlesOnlyWhatNeedsNoEvidence(t *testing.T) {
	deadAlice := func(id owner.Identity) (bool, error) { return !id.Same(alice), nil }
	unknown := func(owner.Identity) (bool, error) { return false, errors.New("cannot tell") }
	t1 := t0.Add(time.Minute)

	t.Run("a prepared op of a dead owner is released as not sent", func(t *testing.T) {
		s := captured(t)
		got := s.ReapDeadOwners(deadAlice, t1)
		if len(got) != 1 || got[0] != (Reaped{TaskID: "ses_a", OpID: "op1", Kind: LeaseRelaunch, Released: true}) {
			t.Fatalf("reaped %+v", got)
		}
		op := s.Ops["op1"]
		if s.Leases["ses_a"] != nil || op.Phase != PhaseRejected || op.Outcome != OutcomeNotSent || !op.SettledAt.Equal(t1) {
			t.Fatalf("lease %v, op %+v", s.Leases["ses_a"], op)
		}
	})
	t.Run("a sent op of a dead owner is orphaned, lease kept", func(t *testing.T) {
		s := captured(t)
		s.MarkSent("op1", alice, t0)
		got := s.ReapDeadOwners(deadAlice, t1)
		if len(got) != 1 || !got[0].Orphaned || got[0].Released {
			t.Fatalf("reaped %+v", got)
		}
		if l := s.Leases["ses_a"]; l == nil || l.State != LeaseOrphaned || l.Token != "tok-a" || l.Note == "" {
			t.Fatalf("lease %+v", l)
		}
		if op := s.Ops["op1"]; op.Phase != PhaseOrphaned || op.Outcome != OutcomeOrphaned || !op.SettledAt.IsZero() {
			t.Fatalf("op %+v", op)
		}
		if again := s.ReapDeadOwners(deadAlice, t1); len(again) != 0 {
			t.Fatalf("a second reap changed %+v", again)
		}
	})
	t.Run("a dead owner's lease without an op is orphaned", func(t *testing.T) {
		s, _ := leased(t)
		got := s.ReapDeadOwners(deadAlice, t1)
		if len(got) != 1 || !got[0].Orphaned || s.Leases["ses_a"].State != LeaseOrphaned {
			t.Fatalf("reaped %+v, lease %+v", got, s.Leases["ses_a"])
		}
	})
	t.Run("a dead owner's notification lease is released, its sent op settled as orphaned", func(t *testing.T) {
		s := captured(t)
		s.Leases["ses_a"].Kind = LeaseNotification
		s.Ops["op1"].Kind = OpNotification
		s.MarkSent("op1", alice, t0)
		got := s.ReapDeadOwners(deadAlice, t1)
		if len(got) != 1 || got[0] != (Reaped{TaskID: "ses_a", OpID: "op1", Kind: LeaseNotification, Released: true}) {
			t.Fatalf("reaped %+v", got)
		}
		op := s.Ops["op1"]
		if s.Leases["ses_a"] != nil || op.Phase != PhaseSettled || op.Outcome != OutcomeOrphaned || !op.SettledAt.Equal(t1) {
			t.Fatalf("lease %+v, op %+v", s.Leases["ses_a"], op)
		}
	})
	t.Run("a dead owner's notification lease without an op is released", func(t *testing.T) {
		s, _ := leased(t)
		s.Leases["ses_a"].Kind = LeaseNotification
		got := s.ReapDeadOwners(deadAlice, t1)
		if len(got) != 1 || !got[0].Released || got[0].Orphaned || s.Leases["ses_a"] != nil {
			t.Fatalf("reaped %+v, lease %+v", got, s.Leases["ses_a"])
		}
	})
	t.Run("accepted and compensating ops keep their phase; their lease is orphaned", func(t *testing.T) {
		for _, p := range []Phase{PhaseAccepted, PhaseCompensating} {
			s := captured(t)
			s.Ops["op1"].Phase = p
			s.ReapDeadOwners(deadAlice, t1)
			if s.Ops["op1"].Phase != p || s.Leases["ses_a"].State != LeaseOrphaned {
				t.Fatalf("%s: op %s, lease %s", p, s.Ops["op1"].Phase, s.Leases["ses_a"].State)
			}
		}
	})
	t.Run("a live owner, or one that cannot be checked, keeps everything", func(t *testing.T) {
		for name, alive := range map[string]func(owner.Identity) (bool, error){
			"alive":   func(owner.Identity) (bool, error) { return true, nil },
			"unknown": unknown,
		} {
			s := captured(t)
			if got := s.ReapDeadOwners(alive, t1); len(got) != 0 || s.Leases["ses_a"].State != LeaseHeld || s.Ops["op1"].Phase != PhasePrepared {
				t.Fatalf("%s: reaped %+v", name, got)
			}
		}
	})
	t.Run("a dead op owner whose lease a live process now owns is left alone", func(t *testing.T) {
		s := captured(t)
		s.Leases["ses_a"].Owner = bob
		if got := s.ReapDeadOwners(deadAlice, t1); len(got) != 0 || s.Leases["ses_a"] == nil || s.Ops["op1"].Phase != PhasePrepared {
			t.Fatalf("reaped %+v", got)
		}
	})
	t.Run("a dead owner's prepared op never releases another holder's lease", func(t *testing.T) {
		s := captured(t)
		s.Leases["ses_a"] = &Lease{TaskID: "ses_a", Kind: LeaseMessage, Token: "tok-b", Generation: 1, Owner: bob, State: LeaseHeld}
		s.ReapDeadOwners(deadAlice, t1)
		if l := s.Leases["ses_a"]; l == nil || l.Token != "tok-b" || l.State != LeaseHeld {
			t.Fatalf("bob's lease: %+v", l)
		}
		if s.Ops["op1"].Phase != PhaseRejected {
			t.Fatalf("alice's prepared op: %s", s.Ops["op1"].Phase)
		}
	})
	t.Run("each owner is checked once", func(t *testing.T) {
		s := captured(t)
		s.Leases["ses_b"] = &Lease{TaskID: "ses_b", Kind: LeaseMessage, Token: "t2", Owner: alice, State: LeaseHeld}
		calls := 0
		s.ReapDeadOwners(func(id owner.Identity) (bool, error) { calls++; return false, nil }, t1)
		if calls != 1 {
			t.Fatalf("alive called %d times for one owner", calls)
		}
	})
}
