package tasks

import (
	"testing"

	"github.com/slimgate/slim/tasks/internal/store"
)

// A revive's caller may read its op only after a fast compensation has
// finished: a settled op the compensation closed still reads as
// compensated, and no other settled op does.
func TestAnOpReadsAsCompensatedInEveryPhaseACompensationLeavesIt(t *testing.T) {
	for _, tt := range []struct {
		op   store.Op
		want bool
	}{
		{store.Op{Phase: store.PhaseCompensating}, true},
		{store.Op{Phase: store.PhaseQuarantined, Error: "compensation unconfirmed: the session is busy"}, true},
		{store.Op{Phase: store.PhaseSettled, Outcome: store.OutcomeAccepted, Error: msgCompensated}, true},
		{store.Op{Phase: store.PhaseSettled, Outcome: store.OutcomeAccepted}, false},
		{store.Op{Phase: store.PhaseSettled, Outcome: store.OutcomeAccepted, Error: "admitted after the lease was lost; nothing registered"}, false},
		{store.Op{Phase: store.PhaseRejected, Outcome: store.OutcomeRejected4xx}, false},
	} {
		if got := compensated(tt.op); got != tt.want {
			t.Errorf("compensated(%s, %q) = %v, want %v", tt.op.Phase, tt.op.Error, got, tt.want)
		}
	}
}
