package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

var (
	t0    = time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	alice = owner.Identity{PID: 100, StartTime: 1, BootID: "b", Host: "h"}
	bob   = owner.Identity{PID: 200, StartTime: 2, BootID: "b", Host: "h"}
)

// leased returns a state with generation 1 issued and a held message
// lease on ses_a owned by alice.
func leased(t *testing.T) (*State, *Lease) {
	t.Helper()
	s := NewState()
	s.NextGeneration()
	l, err := s.AcquireLease(LeaseRequest{TaskID: "ses_a", Kind: LeaseMessage, Token: "tok-a", Generation: 1, Owner: alice}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s, l
}

func TestAcquireLeaseIsACompareAndSet(t *testing.T) {
	s, l := leased(t)
	want := Lease{TaskID: "ses_a", Kind: LeaseMessage, Token: "tok-a", Seq: 1, Generation: 1, AcquiredAt: t0, Owner: alice, State: LeaseHeld}
	if *l != want || s.Leases["ses_a"] != l {
		t.Fatalf("lease %+v, want %+v", *l, want)
	}
	// Any second lease on the task is refused, whatever its kind, and
	// whatever state the first is in: an orphaned or quarantined lease
	// still excludes.
	for _, st := range []LeaseState{LeaseHeld, LeaseOrphaned, LeaseQuarantined} {
		l.State = st
		for _, k := range []LeaseKind{LeaseMessage, LeaseCancellation, LeaseRelaunch, LeaseNotification} {
			_, err := s.AcquireLease(LeaseRequest{TaskID: "ses_a", Kind: k, Token: "tok-b", Generation: 1, Owner: bob}, t0)
			if !is(err, Refused, CodeLeaseHeld) {
				t.Fatalf("a %s lease over a %s one: err = %v", k, st, err)
			}
		}
	}
	if s.Leases["ses_a"].Token != "tok-a" || s.Meta.LeaseSeq != 1 {
		t.Fatal("a refused acquire changed the state")
	}
	// Another task is independent; deleting a job does not free its lease.
	if _, err := s.AcquireLease(LeaseRequest{TaskID: "ses_b", Kind: LeaseRelaunch, Token: "tok-c", Generation: 1}, t0); err != nil {
		t.Fatal(err)
	}
	if s.Meta.LeaseSeq != 2 || s.Leases["ses_b"].Seq != 2 {
		t.Fatalf("leaseSeq %d, seq %d", s.Meta.LeaseSeq, s.Leases["ses_b"].Seq)
	}
}

func TestAcquireLeaseRefusesBadRequests(t *testing.T) {
	s := NewState()
	s.NextGeneration()
	for name, req := range map[string]LeaseRequest{
		"no task":                 {Kind: LeaseMessage, Token: "t"},
		"unknown kind":            {TaskID: "a", Kind: "exclusive", Token: "t"},
		"no token":                {TaskID: "a", Kind: LeaseMessage},
		"a generation not issued": {TaskID: "a", Kind: LeaseMessage, Token: "t", Generation: 2},
		"a negative generation":   {TaskID: "a", Kind: LeaseMessage, Token: "t", Generation: -1},
	} {
		if _, err := s.AcquireLease(req, t0); !is(err, Refused, CodeBadLease) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(s.Leases) != 0 || s.Meta.LeaseSeq != 0 {
		t.Fatal("a refused request changed the state")
	}
}

func TestValidateLeaseNeedsTheSameTokenKindGenerationAndAHeldLease(t *testing.T) {
	s, l := leased(t)
	ref := l.Ref()
	if got, err := s.ValidateLease(ref); err != nil || got != l {
		t.Fatalf("the holder's own ref: %v", err)
	}
	for name, r := range map[string]LeaseRef{
		"another token":      {TaskID: "ses_a", Token: "tok-x", Kind: LeaseMessage, Generation: 1},
		"another kind":       {TaskID: "ses_a", Token: "tok-a", Kind: LeaseCancellation, Generation: 1},
		"another generation": {TaskID: "ses_a", Token: "tok-a", Kind: LeaseMessage, Generation: 0},
		"another task":       {TaskID: "ses_b", Token: "tok-a", Kind: LeaseMessage, Generation: 1},
	} {
		if _, err := s.ValidateLease(r); !is(err, Refused, CodeLeaseStale) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	l.State = LeaseOrphaned
	if _, err := s.ValidateLease(ref); !is(err, Refused, CodeLeaseStale) {
		t.Errorf("an orphaned lease validated: %v", err)
	}
	l.State = LeaseHeld
	if _, err := s.CheckOwner(ref, alice); err != nil {
		t.Errorf("CheckOwner by the owner: %v", err)
	}
	if _, err := s.CheckOwner(ref, bob); !is(err, Refused, CodeLeaseNotOwner) {
		t.Errorf("CheckOwner by another process: %v", err)
	}
	if _, err := s.CheckOwner(LeaseRef{TaskID: "ses_a", Token: "tok-x", Kind: LeaseMessage, Generation: 1}, alice); !is(err, Refused, CodeLeaseStale) {
		t.Errorf("CheckOwner with a stale token: %v", err)
	}
}

func TestReleaseLeaseOnlyByItsToken(t *testing.T) {
	s, _ := leased(t)
	for _, tok := range []string{"", "tok-x"} {
		if err := s.ReleaseLease("ses_a", tok); !is(err, Refused, CodeLeaseStale) {
			t.Fatalf("release with %q: %v", tok, err)
		}
	}
	if s.Leases["ses_a"] == nil {
		t.Fatal("a wrong token released the lease")
	}
	s.Leases["ses_a"].State = LeaseQuarantined // any state
	if err := s.ReleaseLease("ses_a", "tok-a"); err != nil {
		t.Fatal(err)
	}
	if s.Leases["ses_a"] != nil {
		t.Fatal("still leased")
	}
	if err := s.ReleaseLease("ses_a", "tok-a"); !is(err, Refused, CodeLeaseStale) {
		t.Fatalf("a second release: %v", err)
	}
}

func TestNewTokenIsRandom128Bits(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok, err := NewToken()
		if err != nil {
			t.Fatal(err)
		}
		if len(tok) != 32 || seen[tok] {
			t.Fatalf("token %q (len %d, seen %v)", tok, len(tok), seen[tok])
		}
		seen[tok] = true
	}
}

// TestLeasesKeepOneHolderPerTaskUnderRandomSequences runs random
// sequences of acquire, release, hand-off, send, reap and a round trip
// through the document against a model of who holds each task, and
// checks after every step that each task has at most the model's one
// lease, that exactly the current holder's token validates, and that no
// call ever released or replaced a lease it did not own.
func TestLeasesKeepOneHolderPerTaskUnderRandomSequences(t *testing.T) {
	tasks := []string{"ses_a", "ses_b", "ses_c"}
	procs := []owner.Identity{alice, bob, {PID: 300, StartTime: 3, BootID: "b", Host: "h"}}
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, seed*7919))
		s := NewState()
		s.NextGeneration()
		type held struct {
			token, op string
			owner     owner.Identity
		}
		model := map[string]held{} // task -> its one lease
		var tokens []string        // every token ever issued
		dead := map[owner.Identity]bool{}
		n := 0
		fail := func(step int, format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d step %d: %s", seed, step, fmt.Sprintf(format, args...))
		}
		for step := range 60 {
			task := tasks[rng.IntN(len(tasks))]
			who := procs[rng.IntN(len(procs))]
			switch rng.IntN(7) {
			case 0, 1: // acquire, with a prepared op half the time
				n++
				tok, op := "tok"+strconv.Itoa(n), ""
				if rng.IntN(2) == 0 {
					op = "op" + strconv.Itoa(n)
					if _, err := s.AddOp(OpRequest{ID: op, Kind: OpMessage, TaskID: task, Generation: 1, LeaseToken: tok, Owner: who}, t0); err != nil {
						fail(step, "AddOp: %v", err)
					}
				}
				tokens = append(tokens, tok)
				_, err := s.AcquireLease(LeaseRequest{TaskID: task, Kind: LeaseMessage, Token: tok, Generation: 1, OpID: op, Owner: who}, t0)
				_, had := model[task]
				if had != (err != nil) {
					fail(step, "acquire on %s with a lease present=%v: err = %v", task, had, err)
				}
				if err == nil {
					model[task] = held{tok, op, who}
				}
			case 2: // release with a random token ever issued
				if len(tokens) == 0 {
					continue
				}
				tok := tokens[rng.IntN(len(tokens))]
				err := s.ReleaseLease(task, tok)
				cur, had := model[task]
				if ok := had && cur.token == tok; ok != (err == nil) {
					fail(step, "release %s with %s (holder %v): err = %v", task, tok, cur.token, err)
				}
				if err == nil {
					delete(model, task)
				}
			case 3: // hand the task's op to another process
				cur, had := model[task]
				if !had || cur.op == "" {
					continue
				}
				if err := s.HandOffOp(cur.op, who, procs[0]); err == nil {
					if !cur.owner.Same(who) || s.Leases[task].State != LeaseHeld {
						fail(step, "%v took over %s's op from %v", who, task, cur.owner)
					}
					cur.owner = procs[0]
					model[task] = cur
				}
			case 4: // mark the task's op sent
				cur, had := model[task]
				if !had || cur.op == "" {
					continue
				}
				s.MarkSent(cur.op, who, t0)
			case 5: // someone dies, and a later caller reaps
				victim := procs[rng.IntN(len(procs))]
				dead[victim] = true
				s.ReapDeadOwners(func(id owner.Identity) (bool, error) { return !dead[id], nil }, t0)
				for tk, cur := range model {
					l := s.Leases[tk]
					if l == nil {
						op := s.Ops[cur.op]
						if cur.op == "" || op == nil || op.Outcome != OutcomeNotSent || !dead[cur.owner] {
							fail(step, "reaping released %s's lease without a prepared op of a dead owner", tk)
						}
						delete(model, tk)
					} else if dead[cur.owner] && l.State == LeaseHeld {
						fail(step, "reaping left %s held by a dead owner", tk)
					}
				}
				delete(dead, victim) // a new process may start with that identity's sibling
			case 6: // persist and reload
				data, err := json.Marshal(s)
				if err != nil {
					fail(step, "encode: %v", err)
				}
				if s, err = decode("state.json", data); err != nil {
					fail(step, "the state no longer decodes: %v", err)
				}
			}
			// I1, and only the model's holder validates.
			for _, tk := range tasks {
				l, had := s.Leases[tk], false
				cur, inModel := model[tk]
				had = l != nil
				if had != inModel || (had && l.Token != cur.token) {
					fail(step, "task %s: lease %+v, model %+v", tk, l, cur)
				}
				for _, tok := range tokens {
					_, err := s.ValidateLease(LeaseRef{TaskID: tk, Token: tok, Kind: LeaseMessage, Generation: 1})
					if err == nil && (!inModel || tok != cur.token) {
						fail(step, "token %s validates on %s, held by %q", tok, tk, cur.token)
					}
				}
			}
			if err := s.check(); err != nil {
				fail(step, "the state breaks the schema: %v", err)
			}
		}
	}
}
