package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/hooks/protocol"
)

// The budget context ends at its deadline, as context.WithDeadline does,
// whether it is waited on directly or through a context derived from it.
func TestBudgetContextEndsAtItsDeadline(t *testing.T) {
	for _, c := range []struct {
		name string
		wait func(*budgetContext) context.Context
	}{
		{"waited on directly", func(b *budgetContext) context.Context { return b }},
		{"through a derived context with a later deadline", func(b *budgetContext) context.Context {
			ctx, cancel := context.WithTimeout(b, time.Hour)
			t.Cleanup(cancel)
			return ctx
		}},
		{"through a derived cancel context", func(b *budgetContext) context.Context {
			ctx, cancel := context.WithCancel(b)
			t.Cleanup(cancel)
			return ctx
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBudgetContext(20 * time.Millisecond)
			deadline := b.deadline
			defer b.stop()
			ctx := c.wait(b)
			if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
				t.Fatalf("Deadline() = %v, %v; want %v, true", d, ok, deadline)
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("Err() before the deadline = %v", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("not done 5 s after a 20 ms deadline")
			}
			if time.Now().Before(deadline) {
				t.Error("done before its deadline")
			}
			if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err() = %v, want context.DeadlineExceeded", err)
			}
		})
	}
}

func TestBudgetContextPastDeadlineIsDoneAtOnce(t *testing.T) {
	b := newBudgetContext(-time.Second)
	defer b.stop()
	select {
	case <-b.Done():
	default:
		t.Fatal("a context whose deadline has passed is not done")
	}
	if err := b.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Err() = %v, want context.DeadlineExceeded", err)
	}
}

func TestBudgetContextStoppedUnstartedIsCancelled(t *testing.T) {
	b := newBudgetContext(time.Hour)
	b.stop()
	select {
	case <-b.Done():
	default:
		t.Fatal("a stopped context is not done")
	}
	if err := b.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err() = %v, want context.Canceled", err)
	}
	b.stop() // a second stop is harmless
}

// Only an apply_patch check waits on the budget: answering any other call
// leaves the budget context unstarted, so the hook starts no timer for it.
func TestHookStartsTheBudgetTimerForApplyPatchOnly(t *testing.T) {
	t.Setenv("SLIM_STATE_DIR", t.TempDir())
	dir, _ := json.Marshal(t.TempDir())
	host := `"host":{"platform":"linux","directory":` + string(dir) + `,"worktree":` + string(dir) + `,"cwd":` + string(dir) + `}`
	for _, c := range []struct {
		phase   protocol.Phase
		req     string
		started bool
	}{
		{protocol.Before, `{"v":1,` + host + `,"tool":"task","sessionID":"s","callID":"c1","args":{"prompt":"look around"}}`, false},
		{protocol.Before, `{"v":1,` + host + `,"tool":"read","sessionID":"s","callID":"c2","args":{"filePath":"a.go"}}`, false},
		{protocol.After, `{"v":1,` + host + `,"tool":"read","sessionID":"s","callID":"c2","output":"package a\n"}`, false},
		{protocol.Event, `{"v":1,` + host + `,"sessionID":"s","event":{"type":"session.idle","sessionID":"s"}}`, false},
		{protocol.Before, `{"v":1,` + host + `,"tool":"apply_patch","sessionID":"s","callID":"c3","args":{"patchText":"*** Begin Patch\n*** Add File: b.txt\n+hi\n*** End Patch"}}`, true},
	} {
		req, err := protocol.Decode([]byte(c.req))
		if err == nil {
			err = req.Validate(c.phase)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.req, err)
		}
		b := newBudgetContext(time.Hour)
		resp := newDispatcher(&env{log: zerolog.Nop()}).HandleContext(b, req)
		if resp.Action == protocol.Block {
			t.Fatalf("%s %s: blocked: %s", c.phase, req.Tool, resp.Message)
		}
		if started := b.ctx != nil; started != c.started {
			t.Errorf("%s %s: budget timer started %v, want %v", c.phase, req.Tool, started, c.started)
		}
		b.stop()
	}
}
