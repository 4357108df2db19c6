package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/slimgate/slim/tasks/internal/opencode"
	"github.com/slimgate/slim/tasks/internal/owner"
	"github.com/slimgate/slim/tasks/internal/store"
)

// A remote write that holds a lease is sent by a detached settler
// process, never by the tool call itself: the lease must stay owned
// until the write settles, and the tool call has to answer the model by
// its deadline. The tool call journals the op and takes the lease
// (prepared, owned by itself), starts `slim tasks _settle` with the
// order on its stdin and the write end of a pipe as its fd 3, and waits
// for that pipe or its deadline, whichever comes first. The settler
// takes the op over (compare-and-set on the owner), checks the records
// again and marks the op sent in one transaction, sends without a local
// deadline, commits the outcome and its follow-ups, and closes the pipe.
//
// A crash anywhere leaves evidence: a prepared op of a dead owner proves
// nothing was sent (its lease is released by the next caller); an op
// marked sent of a dead owner may have been admitted (its lease is
// orphaned and only evidence or an operator resolves it).

// order is what the settler is told on stdin.
type order struct {
	Scope      scope          `json:"scope"`
	OpID       string         `json:"opID"`
	Foreground owner.Identity `json:"foreground"`
	// Name is the task as the model named it, for messages.
	Name   string           `json:"name"`
	Prompt *opencode.Prompt `json:"prompt,omitempty"`
	// What a revive saw before it asked for the send: the baseline
	// message, the last busy time and the deletion epoch, which must be
	// unchanged when the prompt is sent, and the scope's epoch counter
	// then, which tells whether anything was deleted since.
	Baseline       string    `json:"baseline,omitempty"`
	LastLiveBusyAt time.Time `json:"lastLiveBusyAt,omitzero"`
	Epoch          int64     `json:"epoch,omitempty"`
	EpochSeq       int64     `json:"epochSeq,omitempty"`
	// Notice names the run a notifier reports (OpID is then
	// notifyOpArg: the notifier journals its own ops).
	Notice *notice `json:"notice,omitempty"`
}

// maxOrderBytes bounds the order a settler reads.
const maxOrderBytes = MaxRequestBytes + 64<<10

// settlerHandle is a started settler: done is closed when it closed its
// end of the pipe (it exited or finished).
type settlerHandle struct {
	done chan struct{}
	// sent is closed once the order is written to the settler's stdin (or
	// the write failed): a caller that does not wait for done must wait
	// for sent before it exits, or the settler may never get its order.
	sent chan struct{}
}

// spawnSettler starts the settler of op o, detached in its own session so
// that killing the tool call (the host's abort) does not kill it.
func (e *engine) spawnSettler(o order) (*settlerHandle, error) {
	e.crashPoint(CrashCaptured)
	return e.startSettler(o)
}

// startSettler starts the settler of order o, detached in its own
// session; done closes when it closes its end of the pipe.
func (e *engine) startSettler(o order) (*settlerHandle, error) {
	data, err := json.Marshal(o)
	if err != nil {
		return nil, internalErr(err, "cannot encode the settler's order")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, internalErr(err, "cannot make the settler's pipe")
	}
	path, args := e.cfg.settler()
	cmd := &exec.Cmd{Path: path, Args: append(append([]string(nil), args...), o.OpID)}
	in, err := cmd.StdinPipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, internalErr(err, "cannot make the settler's stdin")
	}
	cmd.ExtraFiles = []*os.File{w}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, internalErr(err, "cannot start the settler %s", path)
	}
	w.Close()
	h := &settlerHandle{done: make(chan struct{}), sent: make(chan struct{})}
	go func() {
		in.Write(data)
		in.Close()
		close(h.sent)
	}()
	go func() {
		io.Copy(io.Discard, r)
		r.Close()
		close(h.done)
	}()
	go cmd.Wait()
	return h, nil
}

// awaitOp waits for the settler of opID or the deadline d. When the
// deadline comes first and the op is still unsettled, the caller's
// timeout answer is committed (CallerAnswered) and timedOut is true;
// from then on the caller's answer is the timeout, whatever the settler
// later records. The op is returned as it stood at that moment.
//
// A settler that exits after sending without recording the outcome (it
// was killed, or its store write failed) leaves the outcome unknown, as
// a deadline does: the caller then waits out its deadline (evidence may
// still settle the op meanwhile) and answers as at any deadline.
//
// When ctx ends first (the host stopped the call), the caller's answer is
// committed the same way and the call fails: the settler goes on and
// settles the write in the background.
func (e *engine) awaitOp(ctx context.Context, h *settlerHandle, opID string, d time.Duration) (op store.Op, timedOut bool, err error) {
	t := time.NewTimer(d)
	defer t.Stop()
	interrupted := false
	select {
	case <-ctx.Done():
		interrupted = true
	case <-h.done:
		op, err = e.readOp(opID)
		switch {
		case err != nil:
			return op, false, err
		case op.Phase == store.PhasePrepared && op.Owner.Same(e.self):
			return e.releaseUnsent(opID)
		case settledForCaller(&op):
			return op, false, nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			interrupted = true
		}
	case <-t.C:
	}
	err = e.update(func(st *store.State) error {
		p := st.Ops[opID]
		if p == nil {
			return internalErr(errors.New("op missing"), "the journal lost op %s", opID)
		}
		if !settledForCaller(p) {
			p.CallerAnswered, timedOut = true, true
		}
		op = *p
		return nil
	})
	if err == nil && interrupted && timedOut {
		if op.Phase == store.PhasePrepared {
			err = toolErr("the call was stopped before anything was sent; its settler sends the request and settles it in the background (see task_status)")
		} else {
			err = toolErr("the call was stopped before the host answered; the request already made is settled in the background (see task_status)")
		}
	}
	return op, timedOut, err
}

// readOp returns the op as the journal holds it.
func (e *engine) readOp(opID string) (op store.Op, err error) {
	err = e.view(func(st *store.State) error {
		p := st.Ops[opID]
		if p == nil {
			return internalErr(errors.New("op missing"), "the journal lost op %s", opID)
		}
		op = *p
		return nil
	})
	return op, err
}

// releaseUnsent settles an op whose settler exited without taking it
// over: nothing was sent. The op and its lease are this process's to
// release.
func (e *engine) releaseUnsent(opID string) (op store.Op, timedOut bool, err error) {
	err = e.update(func(st *store.State) error {
		p := st.Ops[opID]
		if p != nil && p.Phase == store.PhasePrepared && p.Owner.Same(e.self) {
			p.Phase, p.Outcome, p.SettledAt = store.PhaseRejected, store.OutcomeNotSent, e.now()
			p.Error = "the settler exited before sending"
			if l := st.Leases[p.TaskID]; l != nil && l.Token == p.LeaseToken {
				delete(st.Leases, p.TaskID)
			}
		}
		if p != nil {
			op = *p
		}
		return nil
	})
	return op, false, err
}

// settledForCaller reports whether the settler has recorded what the
// caller is waiting for.
func settledForCaller(op *store.Op) bool {
	switch op.Phase {
	case store.PhaseRejected, store.PhaseSettled, store.PhaseAccepted, store.PhaseCompensating, store.PhaseQuarantined:
		return true
	}
	return false
}

// Settle runs the settler of one op: it reads its order from stdin and
// signals the tool call by closing fd 3 (given as done) once the outcome
// the caller waits for is committed.
func Settle(ctx context.Context, cfg Config, opID string, stdin io.Reader, done io.WriteCloser) error {
	data, err := io.ReadAll(io.LimitReader(stdin, maxOrderBytes))
	if err != nil {
		return internalErr(err, "settler: cannot read the order")
	}
	var o order
	if err := json.Unmarshal(data, &o); err != nil {
		return usageErr("settler: the order does not decode: %v", err)
	}
	if o.OpID != opID {
		return usageErr("settler: the order is for op %s, not %s", o.OpID, opID)
	}
	if (o.Notice == nil) != (opID != notifyOpArg) {
		return usageErr("settler: %v", errNoticeOrder)
	}
	e, err := open(cfg, o.Scope)
	if err != nil {
		return err
	}
	if o.Notice != nil {
		if done != nil {
			done.Close() // nobody waits for a notifier
		}
		return e.notify(ctx, *o.Notice)
	}
	signal := func() {
		if done != nil {
			done.Write([]byte{1})
			done.Close()
			done = nil
		}
	}
	defer signal()
	return e.settle(ctx, o, signal)
}
