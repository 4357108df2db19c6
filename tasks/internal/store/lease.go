package store

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// LeaseKind says which lifecycle operation holds a lease.
type LeaseKind string

// The lease kinds. A held lease of any kind excludes every other lease for
// the same task, a second one of the same kind included.
const (
	LeaseCancellation LeaseKind = "cancellation"
	LeaseRelaunch     LeaseKind = "relaunch"
	LeaseMessage      LeaseKind = "message"
	LeaseNotification LeaseKind = "terminal-notification"
)

func (k LeaseKind) known() bool {
	switch k {
	case LeaseCancellation, LeaseRelaunch, LeaseMessage, LeaseNotification:
		return true
	}
	return false
}

// LeaseState says whether a lease's owner is still in charge of it.
type LeaseState string

// The lease states. No lease ever expires by time: an orphaned or
// quarantined lease still excludes every other lease for its task until
// evidence or an operator resolves it.
const (
	// LeaseHeld: the owner is alive, or not known to be dead.
	LeaseHeld LeaseState = "held"
	// LeaseOrphaned: the owner died while the outcome of its remote write
	// was unknown.
	LeaseOrphaned LeaseState = "orphaned"
	// LeaseQuarantined: a compensation could not be confirmed; only an
	// operator releases it.
	LeaseQuarantined LeaseState = "quarantined"
)

func (s LeaseState) known() bool {
	switch s {
	case LeaseHeld, LeaseOrphaned, LeaseQuarantined:
		return true
	}
	return false
}

// Lease is the exclusive right of one lifecycle operation over one task's
// current run.
type Lease struct {
	TaskID string    `json:"taskID"`
	Kind   LeaseKind `json:"kind"`
	// Token is random and proves the holder: only the token's holder may
	// release the lease, so a stale holder cannot release a successor's.
	Token string `json:"token"`
	// Seq is the lease's number in Meta.LeaseSeq, for ordering in
	// diagnostics.
	Seq int64 `json:"seq"`
	// Generation is the run the lease was taken for.
	Generation int64 `json:"generation"`
	// TerminalRevision is the terminal publication a notification lease
	// was taken for.
	TerminalRevision *int64    `json:"terminalRevision,omitempty"`
	AcquiredAt       time.Time `json:"acquiredAt"`
	// OpID is the journal row of the remote write the lease protects.
	OpID  string         `json:"opID,omitempty"`
	Owner owner.Identity `json:"owner"`
	State LeaseState     `json:"state"`
	Note  string         `json:"note,omitempty"`
}

// LeaseRef names a lease as its holder knows it.
type LeaseRef struct {
	TaskID     string
	Token      string
	Kind       LeaseKind
	Generation int64
}

// Ref returns the reference a holder keeps for l.
func (l *Lease) Ref() LeaseRef {
	return LeaseRef{TaskID: l.TaskID, Token: l.Token, Kind: l.Kind, Generation: l.Generation}
}

// LeaseRequest asks for a new lease.
type LeaseRequest struct {
	TaskID           string
	Kind             LeaseKind
	Token            string // from NewToken
	Generation       int64
	TerminalRevision *int64
	OpID             string
	Owner            owner.Identity
	Note             string
}

// NewToken returns a random 128-bit token (32 hex digits) for a lease or
// an op ID.
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", newErr(IO, CodeIO, err, "cannot draw a random token")
	}
	return hex.EncodeToString(b[:]), nil
}

// AcquireLease takes a lease for req.TaskID by compare-and-set: it
// succeeds only when the task has no lease at all, whatever its kind or
// state, so a task never has two (and a lease that outlived its job still
// blocks). It never waits; a task that already has a lease is Refused
// with CodeLeaseHeld and the state is unchanged. Whether the job may be
// leased (its state, its generation) is the caller's check, made in the
// same transaction.
func (s *State) AcquireLease(req LeaseRequest, now time.Time) (*Lease, error) {
	switch {
	case req.TaskID == "":
		return nil, refused(CodeBadLease, "a lease needs a task ID")
	case !req.Kind.known():
		return nil, refused(CodeBadLease, "unknown lease kind %q", req.Kind)
	case req.Token == "":
		return nil, refused(CodeBadLease, "a lease needs a token")
	case req.Generation < 0 || req.Generation > s.Meta.GenerationSeq:
		return nil, refused(CodeBadLease, "generation %d was never issued", req.Generation)
	}
	if cur := s.Leases[req.TaskID]; cur != nil {
		return nil, refused(CodeLeaseHeld, "task %s already has a %s lease (%s, owner %s)", req.TaskID, cur.Kind, cur.State, cur.Owner)
	}
	// A leased job is not settled: looking it up brings an archived one
	// into the transaction, so that it moves back to the live document.
	s.Job(req.TaskID)
	s.Meta.LeaseSeq++
	l := &Lease{
		TaskID:           req.TaskID,
		Kind:             req.Kind,
		Token:            req.Token,
		Seq:              s.Meta.LeaseSeq,
		Generation:       req.Generation,
		TerminalRevision: req.TerminalRevision,
		AcquiredAt:       now,
		OpID:             req.OpID,
		Owner:            req.Owner,
		State:            LeaseHeld,
		Note:             req.Note,
	}
	s.Leases[req.TaskID] = l
	return l, nil
}

// ValidateLease returns the lease ref names when it is still the task's
// lease, is held, and has the same token, kind and generation; otherwise
// Refused with CodeLeaseStale. A holder checks this in every transaction
// that acts on the lease.
func (s *State) ValidateLease(ref LeaseRef) (*Lease, error) {
	l := s.Leases[ref.TaskID]
	switch {
	case l == nil:
		return nil, refused(CodeLeaseStale, "task %s has no lease", ref.TaskID)
	case l.Token != ref.Token:
		return nil, refused(CodeLeaseStale, "task %s's lease is another holder's (%s)", ref.TaskID, l.Kind)
	case l.Kind != ref.Kind || l.Generation != ref.Generation:
		return nil, refused(CodeLeaseStale, "task %s's lease is a %s lease for generation %d, not %s for %d", ref.TaskID, l.Kind, l.Generation, ref.Kind, ref.Generation)
	case l.State != LeaseHeld:
		return nil, refused(CodeLeaseStale, "task %s's %s lease is %s", ref.TaskID, l.Kind, l.State)
	}
	return l, nil
}

// CheckOwner is ValidateLease that also requires the lease to be owned by
// self (CodeLeaseNotOwner otherwise), for a process that acts on a lease
// handed to it.
func (s *State) CheckOwner(ref LeaseRef, self owner.Identity) (*Lease, error) {
	l, err := s.ValidateLease(ref)
	if err != nil {
		return nil, err
	}
	if !l.Owner.Same(self) {
		return nil, refused(CodeLeaseNotOwner, "task %s's %s lease belongs to %s, not %s", ref.TaskID, l.Kind, l.Owner, self)
	}
	return l, nil
}

// ReleaseLease deletes the task's lease when it carries token, in any
// state. A release with another token (or none left) is Refused with
// CodeLeaseStale and changes nothing, so it never releases someone
// else's lease.
func (s *State) ReleaseLease(taskID, token string) error {
	l := s.Leases[taskID]
	if l == nil {
		return refused(CodeLeaseStale, "task %s has no lease to release", taskID)
	}
	if token == "" || l.Token != token {
		return refused(CodeLeaseStale, "task %s's %s lease is another holder's; not released", taskID, l.Kind)
	}
	delete(s.Leases, taskID)
	return nil
}

// Reaped is one change ReapDeadOwners made.
type Reaped struct {
	TaskID string
	OpID   string
	Kind   LeaseKind // of the lease, when one was involved
	// Released: the op was still prepared, so nothing had been sent (the
	// op is rejected, OutcomeNotSent), or the lease was a notification's
	// (see ReapDeadOwners); the lease is released.
	Released bool
	// Orphaned: the lease (and an op in sent_unknown) is now orphaned and
	// stays until evidence or an operator resolves it.
	Orphaned bool
}

// ReapDeadOwners looks for leases and unsettled ops whose owner alive
// reports dead, and settles what dead owners leave behind in the only way
// that needs no evidence:
//
//   - an op still prepared never sent anything, so it is rejected with
//     OutcomeNotSent and the lease it holds is released (the one automatic
//     release of a dead owner's lease);
//   - an op in sent_unknown may have been admitted, so it becomes
//     orphaned, and so does its lease;
//   - any other held lease of a dead owner becomes orphaned;
//   - except a terminal-notification lease, which is released whatever
//     its op's phase (an op that may have been admitted is settled with
//     OutcomeOrphaned): a notification tells the parent about a run that
//     already ended, so a duplicate is the worst its doubt can cause, and
//     it must never keep the task from being revived.
//
// An owner whose liveness alive cannot decide (an error) counts as alive.
// Nothing here depends on how long ago anything happened.
func (s *State) ReapDeadOwners(alive func(owner.Identity) (bool, error), now time.Time) []Reaped {
	memo := map[owner.Identity]bool{}
	dead := func(id owner.Identity) bool {
		d, ok := memo[id]
		if !ok {
			a, err := alive(id)
			d = err == nil && !a
			memo[id] = d
		}
		return d
	}
	var out []Reaped
	for _, id := range sortedKeys(s.Ops) {
		op := s.Ops[id]
		if (op.Phase != PhasePrepared && op.Phase != PhaseSentUnknown) || !dead(op.Owner) {
			continue
		}
		r := Reaped{TaskID: op.TaskID, OpID: op.ID}
		l := s.Leases[op.TaskID]
		if l == nil || op.LeaseToken == "" || l.Token != op.LeaseToken {
			l = nil
		} else if !dead(l.Owner) {
			// A live process owns the op's lease: it is in charge of the
			// op too, whatever the op row says.
			continue
		}
		if l != nil {
			r.Kind = l.Kind
		}
		if l != nil && l.Kind == LeaseNotification && op.Phase == PhaseSentUnknown {
			// A notification never holds its task past its owner: the
			// parent may get it twice, which is better than a task that
			// nothing but an operator can revive.
			op.Phase, op.Outcome, op.SettledAt = PhaseSettled, OutcomeOrphaned, now
			op.Error = "owner exited with the outcome unknown (" + op.Owner.String() + "); the notification lease was released"
			delete(s.Leases, op.TaskID)
			r.Released = true
		} else if op.Phase == PhasePrepared {
			op.Phase, op.Outcome, op.SettledAt = PhaseRejected, OutcomeNotSent, now
			op.Error = "owner exited before sending (" + op.Owner.String() + ")"
			if l != nil {
				delete(s.Leases, op.TaskID)
			}
			r.Released = true
		} else {
			op.Phase, op.Outcome = PhaseOrphaned, OutcomeOrphaned
			op.Error = "owner exited with the outcome unknown (" + op.Owner.String() + ")"
			if l != nil && l.State == LeaseHeld {
				l.State, l.Note = LeaseOrphaned, op.Error
			}
			r.Orphaned = true
		}
		out = append(out, r)
	}
	for _, task := range sortedKeys(s.Leases) {
		l := s.Leases[task]
		if l.State != LeaseHeld || !dead(l.Owner) {
			continue
		}
		if l.Kind == LeaseNotification {
			delete(s.Leases, task)
			out = append(out, Reaped{TaskID: task, OpID: l.OpID, Kind: l.Kind, Released: true})
			continue
		}
		l.State, l.Note = LeaseOrphaned, "owner exited ("+l.Owner.String()+")"
		out = append(out, Reaped{TaskID: task, OpID: l.OpID, Kind: l.Kind, Orphaned: true})
	}
	return out
}
