package store

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// runAll starts every command, waits for all of them and fails the test
// for any that failed.
func runAll(t *testing.T, cmds []*exec.Cmd) {
	t.Helper()
	outs := make([]*bytes.Buffer, len(cmds))
	for i, c := range cmds {
		outs[i] = &bytes.Buffer{}
		c.Stdout, c.Stderr = outs[i], outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("helper %d: %v: %s", i, err, outs[i].String())
		}
	}
}

func TestEightProcessesUpdatingAtOnceLoseNoUpdate(t *testing.T) {
	const workers, n = 8, 40
	s := openT(t, Options{})
	cmds := make([]*exec.Cmd, workers)
	for i := range cmds {
		cmds[i] = helper(t, "count", s.Dir(), strconv.Itoa(i), strconv.Itoa(n))
	}
	runAll(t, cmds)
	if err := s.View(func(st *State) error {
		if st.Meta.GenerationSeq != workers*n {
			t.Errorf("generationSeq = %d, want exactly %d", st.Meta.GenerationSeq, workers*n)
		}
		for i := range workers {
			if got := st.AliasCounters[AliasKey("worker", strconv.Itoa(i))]; got != n {
				t.Errorf("worker %d's counter = %d, want %d", i, got, n)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if tmp := temps(t, s.Dir()); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestEightProcessesNeverHoldOneTasksLeaseAtOnce(t *testing.T) {
	const workers, rounds = 8, 10
	s := openT(t, Options{})
	cmds := make([]*exec.Cmd, workers)
	for i := range cmds {
		cmds[i] = helper(t, "lease", s.Dir(), strconv.Itoa(i), strconv.Itoa(rounds))
	}
	runAll(t, cmds)
	if err := s.View(func(st *State) error {
		// Every worker checked, in its own transaction after acquiring,
		// that the lease was still its own; a second holder would have
		// failed that check and its helper.
		if got := st.AliasCounters["holds"]; got != workers*rounds {
			t.Errorf("%d holds counted, want %d", got, workers*rounds)
		}
		if st.Meta.LeaseSeq != workers*rounds {
			t.Errorf("leaseSeq = %d, want %d acquisitions", st.Meta.LeaseSeq, workers*rounds)
		}
		if len(st.Leases) != 0 {
			t.Errorf("leases left: %v", st.Leases)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestAWriterKilledAtAnyMomentLeavesTheOldOrTheNewDocument(t *testing.T) {
	// About 4.5 MB per version: rewriting it (encode, write, fsync,
	// rename) takes long enough that many kills land in the middle.
	const jobs = 2000
	kills := 12
	if testing.Short() {
		kills = 4
	}
	s := openT(t, Options{LockTimeout: 10 * time.Second})
	if err := s.Update(func(st *State) error { writeRound(st, jobs); return nil }); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("kill times from seed %d", seed)
	var last int64
	midWrite := 0
	for k := range kills {
		w := helper(t, "rewrite", s.Dir(), strconv.Itoa(jobs))
		// Kill at a random moment of a random round's write.
		runUntil(t, w, "writing", 1+rng.IntN(2))
		// Writing, syncing and renaming 4.5 MB takes 5 to 30 ms here;
		// half the kills aim at its first milliseconds.
		d := time.Duration(rng.IntN(40_000)) * time.Microsecond
		if k%2 == 0 {
			d /= 4
		}
		time.Sleep(d)
		kill(t, w)
		if len(temps(t, s.Dir())) > 0 {
			midWrite++
		}
		err := s.View(func(st *State) error {
			if err := checkRound(st, jobs); err != nil {
				t.Fatalf("kill %d after %v: a torn document: %v", k, d, err)
			}
			if st.Meta.GenerationSeq < last {
				t.Fatalf("kill %d: generationSeq %d went back from %d", k, st.Meta.GenerationSeq, last)
			}
			last = st.Meta.GenerationSeq
			return nil
		})
		if err != nil {
			t.Fatalf("kill %d after %v: %v", k, d, err)
		}
	}
	// The kernel dropped every killed holder's lock, and the next writer
	// removes what they left.
	start := time.Now()
	if err := s.Update(func(st *State) error { writeRound(st, jobs); return nil }); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("the next update waited %v for a dead writer's lock", waited)
	}
	if tmp := temps(t, s.Dir()); len(tmp) != 0 {
		t.Fatalf("temporaries left after the next update: %v", tmp)
	}
	t.Logf("%d kills, %d of them between a temporary's creation and its rename; last round %d", kills, midWrite, last)
	if fi, err := os.Stat(s.Path()); err == nil {
		t.Logf("document size %d bytes", fi.Size())
	}
}

// A writer killed in the middle of its write (its temporary half written,
// the lock held, no rename) leaves the document as it was: the next
// caller gets the lock, reads the old document and removes the
// temporary.
func TestAWriterKilledInItsWriteLeavesTheOldDocumentAndItsTemporaryIsSwept(t *testing.T) {
	s := openT(t, Options{LockTimeout: 10 * time.Second})
	if err := s.Update(func(st *State) error { st.AliasCounters["before"] = 1; return nil }); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	w := helper(t, "killmidwrite", s.Dir())
	if err := w.Run(); err == nil {
		t.Fatal("the writer was not killed")
	}
	if tmp := temps(t, s.Dir()); len(tmp) != 1 {
		t.Fatalf("temporaries after the kill: %v, want the killed writer's", tmp)
	}
	if now, _ := os.ReadFile(s.Path()); !bytes.Equal(now, old) {
		t.Fatal("the killed writer changed the document")
	}
	if err := s.Update(func(st *State) error {
		if st.AliasCounters["killed"] != 0 || st.AliasCounters["before"] != 1 {
			t.Errorf("counters after the killed write: %v", st.AliasCounters)
		}
		st.AliasCounters["after"] = 1
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if tmp := temps(t, s.Dir()); len(tmp) != 0 {
		t.Fatalf("temporaries after the next transaction: %v", tmp)
	}
}

func TestALaterCallerReapsWhatAKilledOwnerLeft(t *testing.T) {
	for _, c := range []struct {
		phase     string
		wantLease LeaseState // "" when released
		wantOp    Phase
	}{
		{"prepared", "", PhaseRejected},
		{"sent", LeaseOrphaned, PhaseOrphaned},
	} {
		t.Run(c.phase, func(t *testing.T) {
			s := openT(t, Options{})
			w, _, _ := startHelper(t, "capture", s.Dir(), "captured", c.phase)
			reap := func() (got []Reaped) {
				if err := s.Update(func(st *State) error {
					got = st.ReapDeadOwners(owner.Alive, time.Now())
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				return got
			}
			if got := reap(); len(got) != 0 {
				t.Fatalf("reaped a live owner's lease: %+v", got)
			}
			w.Process.Kill()
			w.Wait()
			if got := reap(); len(got) != 1 {
				t.Fatalf("reaped %+v after the owner was killed", got)
			}
			s.View(func(st *State) error {
				l := st.Leases["ses_a"]
				switch {
				case c.wantLease == "" && l != nil:
					t.Fatalf("lease %+v, want it released", l)
				case c.wantLease != "" && (l == nil || l.State != c.wantLease):
					t.Fatalf("lease %+v, want %s", l, c.wantLease)
				case st.Ops["op1"].Phase != c.wantOp:
					t.Fatalf("op %s, want %s", st.Ops["op1"].Phase, c.wantOp)
				}
				return nil
			})
		})
	}
}
