package store

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// OpKind says what remote write an op is.
type OpKind string

// The op kinds.
const (
	OpLaunch            OpKind = "launch"
	OpMessage           OpKind = "message"
	OpAbort             OpKind = "abort"
	OpReviveAdmission   OpKind = "revive_admission"
	OpCompensationAbort OpKind = "compensation_abort"
	OpNotification      OpKind = "notification"
	// OpWake is a wake prompt to an orchestrator session; its TaskID
	// names that session.
	OpWake OpKind = "wake"
)

func (k OpKind) known() bool {
	switch k {
	case OpLaunch, OpMessage, OpAbort, OpReviveAdmission, OpCompensationAbort, OpNotification, OpWake:
		return true
	}
	return false
}

// Phase is where an op stands.
type Phase string

// The phases. An op starts prepared (nothing sent) and is marked
// sent_unknown in the same transaction as the last check before the send,
// so after a crash sent_unknown means "may have been admitted", never "not
// sent". Rejected and settled are final.
const (
	PhasePrepared     Phase = "prepared"
	PhaseSentUnknown  Phase = "sent_unknown"
	PhaseAccepted     Phase = "accepted"
	PhaseRejected     Phase = "rejected"
	PhaseCompensating Phase = "compensating"
	PhaseSettled      Phase = "settled"
	PhaseQuarantined  Phase = "quarantined"
	PhaseOrphaned     Phase = "orphaned"
)

func (p Phase) known() bool {
	_, ok := transitions[p]
	return ok
}

// Final reports whether p is rejected or settled: nothing follows it, and
// only a final op may be pruned.
func (p Phase) Final() bool { return p == PhaseRejected || p == PhaseSettled }

// transitions lists the phases each phase may move to:
//
//   - prepared: sent (the send rule), or rejected before anything was sent;
//   - sent_unknown: accepted, rejected by an authoritative answer (a 4xx),
//     orphaned when its owner died, quarantined, or settled with the
//     outcome still unknown (a 5xx, a lost connection) by an owner that
//     protects nothing with a lease and records the doubt on the job
//     instead (a launch);
//   - accepted: settled, or compensating when the record it was for is gone;
//   - compensating: settled once quiescence was verified, else quarantined;
//   - orphaned: resolved by evidence (a late acceptance found, or a
//     verified quiescence) or by an operator;
//   - quarantined: resolved by an operator only.
var transitions = map[Phase][]Phase{
	PhasePrepared:     {PhaseSentUnknown, PhaseRejected},
	PhaseSentUnknown:  {PhaseAccepted, PhaseRejected, PhaseOrphaned, PhaseQuarantined, PhaseSettled},
	PhaseAccepted:     {PhaseSettled, PhaseCompensating},
	PhaseCompensating: {PhaseSettled, PhaseQuarantined},
	PhaseOrphaned:     {PhaseAccepted, PhaseRejected, PhaseSettled, PhaseQuarantined},
	PhaseQuarantined:  {PhaseRejected, PhaseSettled},
	PhaseRejected:     nil,
	PhaseSettled:      nil,
}

// CanAdvance reports whether an op in phase from may move to phase to.
func CanAdvance(from, to Phase) bool { return slices.Contains(transitions[from], to) }

// Outcome is what became of an op's request.
type Outcome string

// The outcomes.
const (
	OutcomeAccepted    Outcome = "accepted"
	OutcomeRejected4xx Outcome = "rejected4xx" // an authoritative refusal
	OutcomeFailed5xx   Outcome = "failed5xx"   // may have been admitted
	OutcomeTransport   Outcome = "transport"   // may have been admitted
	OutcomeOrphaned    Outcome = "orphaned"    // the owner died, outcome unknown
	OutcomeNotSent     Outcome = "not_sent"    // failed before the send
)

func (o Outcome) known() bool {
	switch o {
	case OutcomeAccepted, OutcomeRejected4xx, OutcomeFailed5xx, OutcomeTransport, OutcomeOrphaned, OutcomeNotSent:
		return true
	}
	return false
}

// Op is one remote write in the journal.
type Op struct {
	ID     string `json:"id"`
	Kind   OpKind `json:"kind"`
	TaskID string `json:"taskID"` // empty only for a launch before the session exists
	// Generation is the run the write is for; LeaseToken the lease that
	// protects it, if any.
	Generation      int64  `json:"generation"`
	LeaseToken      string `json:"leaseToken,omitempty"`
	Phase           Phase  `json:"phase"`
	ClientMessageID string `json:"clientMessageID,omitempty"`
	// Owner is the process in charge of the op (the one that sends it).
	Owner     owner.Identity `json:"owner"`
	CreatedAt time.Time      `json:"createdAt"`
	// LocalDeadlineAt is the caller's deadline, for diagnostics only:
	// nothing expires because of it.
	LocalDeadlineAt time.Time `json:"localDeadlineAt,omitzero"`
	SentAt          time.Time `json:"sentAt,omitzero"`
	SettledAt       time.Time `json:"settledAt,omitzero"`
	Outcome         Outcome   `json:"outcome,omitempty"`
	Error           string    `json:"error,omitempty"`
	// CallerAnswered: the caller already got its answer (a timeout, say),
	// which a later outcome does not change.
	CallerAnswered bool `json:"callerAnswered,omitempty"`
}

// OpRequest asks for a new journal row.
type OpRequest struct {
	ID              string // from NewToken
	Kind            OpKind
	TaskID          string
	Generation      int64
	LeaseToken      string
	ClientMessageID string
	Owner           owner.Identity
	LocalDeadlineAt time.Time
}

// AddOp writes a new op in phase prepared. An ID already in the journal is
// Refused with CodeOpExists.
func (s *State) AddOp(req OpRequest, now time.Time) (*Op, error) {
	switch {
	case req.ID == "":
		return nil, refused(CodeBadOp, "an op needs an ID")
	case !req.Kind.known():
		return nil, refused(CodeBadOp, "unknown op kind %q", req.Kind)
	case req.TaskID == "" && req.Kind != OpLaunch:
		return nil, refused(CodeBadOp, "a %s op needs a task ID", req.Kind)
	case req.Generation < 0 || req.Generation > s.Meta.GenerationSeq:
		return nil, refused(CodeBadOp, "generation %d was never issued", req.Generation)
	case s.Ops[req.ID] != nil:
		return nil, refused(CodeOpExists, "op %s already exists", req.ID)
	}
	op := &Op{
		ID:              req.ID,
		Kind:            req.Kind,
		TaskID:          req.TaskID,
		Generation:      req.Generation,
		LeaseToken:      req.LeaseToken,
		Phase:           PhasePrepared,
		ClientMessageID: req.ClientMessageID,
		Owner:           req.Owner,
		CreatedAt:       now,
		LocalDeadlineAt: req.LocalDeadlineAt,
	}
	s.Ops[op.ID] = op
	return op, nil
}

// lookupOp returns the op or a CodeOpMissing refusal.
func (s *State) lookupOp(id string) (*Op, error) {
	op := s.Ops[id]
	if op == nil {
		return nil, refused(CodeOpMissing, "op %s is not in the journal", id)
	}
	return op, nil
}

// HandOffOp moves an unsettled op, and the lease that protects it, from
// owner from to owner to, by compare-and-set on both: the op must belong
// to from, and its lease (when it has one) must still carry the op's
// token, be held and belong to from. Otherwise nothing changes. A process
// that takes over another's op does this in its first transaction.
func (s *State) HandOffOp(opID string, from, to owner.Identity) error {
	op, err := s.lookupOp(opID)
	if err != nil {
		return err
	}
	if op.Phase.Final() {
		return refused(CodeOpPhase, "op %s is already %s", opID, op.Phase)
	}
	if !op.Owner.Same(from) {
		return refused(CodeLeaseNotOwner, "op %s belongs to %s, not %s", opID, op.Owner, from)
	}
	var l *Lease
	if op.LeaseToken != "" {
		l = s.Leases[op.TaskID]
		switch {
		case l == nil || l.Token != op.LeaseToken:
			return refused(CodeLeaseStale, "op %s's lease on task %s is gone", opID, op.TaskID)
		case l.State != LeaseHeld:
			return refused(CodeLeaseStale, "op %s's lease on task %s is %s", opID, op.TaskID, l.State)
		case !l.Owner.Same(from):
			return refused(CodeLeaseNotOwner, "op %s's lease belongs to %s, not %s", opID, l.Owner, from)
		}
		l.Owner = to
	}
	op.Owner = to
	return nil
}

// MarkSent applies the send rule: it moves a prepared op to sent_unknown,
// after checking that self owns it and that its lease (when it has one) is
// still the task's, held, of the op's generation and owned by self. Call
// it in the same transaction as the last check of the records the send
// depends on, then send only when that transaction committed. On any
// refusal nothing changes and nothing may be sent.
func (s *State) MarkSent(opID string, self owner.Identity, now time.Time) (*Op, error) {
	op, err := s.lookupOp(opID)
	if err != nil {
		return nil, err
	}
	if op.Phase != PhasePrepared {
		return nil, refused(CodeOpPhase, "op %s is %s, not prepared; it may not be sent again", opID, op.Phase)
	}
	if !op.Owner.Same(self) {
		return nil, refused(CodeLeaseNotOwner, "op %s belongs to %s, not %s", opID, op.Owner, self)
	}
	if op.LeaseToken != "" {
		l := s.Leases[op.TaskID]
		switch {
		case l == nil || l.Token != op.LeaseToken:
			return nil, refused(CodeLeaseStale, "op %s's lease on task %s is gone", opID, op.TaskID)
		case l.State != LeaseHeld:
			return nil, refused(CodeLeaseStale, "op %s's lease on task %s is %s", opID, op.TaskID, l.State)
		case l.Generation != op.Generation:
			return nil, refused(CodeLeaseStale, "op %s is for generation %d but its lease for %d", opID, op.Generation, l.Generation)
		case !l.Owner.Same(self):
			return nil, refused(CodeLeaseNotOwner, "op %s's lease belongs to %s, not %s", opID, l.Owner, self)
		}
	}
	op.Phase, op.SentAt = PhaseSentUnknown, now
	return op, nil
}

// AdvanceOp moves an op to phase to when CanAdvance allows it (Refused
// with CodeOpPhase otherwise), recording outcome and errText when given.
// A final phase sets SettledAt. The lease is the caller's to release.
func (s *State) AdvanceOp(opID string, to Phase, outcome Outcome, errText string, now time.Time) (*Op, error) {
	op, err := s.lookupOp(opID)
	if err != nil {
		return nil, err
	}
	if outcome != "" && !outcome.known() {
		return nil, refused(CodeBadOp, "unknown outcome %q", outcome)
	}
	if !CanAdvance(op.Phase, to) {
		return nil, refused(CodeOpPhase, "op %s may not go from %s to %s", opID, op.Phase, to)
	}
	op.Phase = to
	if outcome != "" {
		op.Outcome = outcome
	}
	if errText != "" {
		op.Error = errText
	}
	if to.Final() {
		op.SettledAt = now
	}
	return op, nil
}

// PruneOps deletes final ops settled more than keep before now and returns
// how many it deleted. An unsettled op is never pruned, however old.
func (s *State) PruneOps(now time.Time, keep time.Duration) int {
	n := 0
	for id, op := range s.Ops {
		if op.Phase.Final() && !op.SettledAt.IsZero() && now.Sub(op.SettledAt) > keep {
			delete(s.Ops, id)
			n++
		}
	}
	return n
}

// sortedKeys returns m's keys in order, so helpers that walk a map act in
// the same order every time.
func sortedKeys[V any](m map[string]V) []string {
	return slices.SortedFunc(maps.Keys(m), cmp.Compare[string])
}
