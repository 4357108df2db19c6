package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slimgate/slim/internal/atomicfile"
	"github.com/slimgate/slim/internal/filelock"
)

// The directory's fsync runs after the lock is released and before Update
// returns (see Update). These tests pin both halves and what the next
// transaction sees in between.

func TestUpdateReleasesTheLockBeforeTheDirectoryFsyncAndReturnsAfterIt(t *testing.T) {
	s := openT(t, Options{})
	other, err := Open(s.Dir(), Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	syncing, finish := make(chan struct{}), make(chan struct{})
	s.syncDir = func(name string) {
		close(syncing)
		<-finish
		atomicfile.SyncDir(name)
	}
	done := make(chan error, 1)
	go func() { done <- s.Update(func(st *State) error { st.NextGeneration(); return nil }) }()
	<-syncing
	// The first Update is in its directory fsync: the lock is free, and
	// the next transaction reads the renamed document and builds on it.
	if err := other.Update(func(st *State) error {
		if st.Meta.GenerationSeq != 1 {
			t.Errorf("the next transaction read generationSeq %d, want the renamed document's 1", st.Meta.GenerationSeq)
		}
		st.NextGeneration()
		return nil
	}); err != nil {
		t.Fatalf("the next transaction while the first syncs the directory: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Update returned (%v) before its directory fsync finished", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(st *State) error {
		if st.Meta.GenerationSeq != 2 {
			t.Errorf("generationSeq %d, want 2", st.Meta.GenerationSeq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestEveryUpdateSyncsTheDirectoryBeforeItReturns: also a transaction that
// writes nothing or fails may have read a document whose writer has not
// yet fsynced the directory, so it fsyncs it too before its caller acts.
func TestEveryUpdateSyncsTheDirectoryBeforeItReturns(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, s *Store)
		fn    func(*State) error
		fails bool
	}{
		{name: "a write", fn: func(st *State) error { st.NextGeneration(); return nil }},
		{name: "no change", fn: func(*State) error { return nil }},
		{name: "fn fails", fn: func(*State) error { return errStop }, fails: true},
		{name: "schema broken", fn: func(st *State) error { st.Meta.GenerationSeq = -1; return nil }, fails: true},
		{
			name:  "corrupt document",
			setup: func(t *testing.T, s *Store) { os.WriteFile(s.Path(), []byte("{"), 0o600) },
			fn:    func(*State) error { return nil }, fails: true,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, Options{})
			if err := s.Update(func(st *State) error { st.NextGeneration(); return nil }); err != nil {
				t.Fatal(err)
			}
			if c.setup != nil {
				c.setup(t, s)
			}
			var synced []string
			s.syncDir = func(name string) {
				// The lock is already free.
				lk, err := filelock.Acquire(filepath.Join(s.Dir(), LockName), 0)
				if err != nil {
					t.Errorf("the lock is still held during the directory fsync: %v", err)
				} else {
					lk.Unlock()
				}
				synced = append(synced, name)
			}
			err := s.Update(c.fn)
			if (err != nil) != c.fails {
				t.Fatalf("err = %v, want failure %v", err, c.fails)
			}
			if len(synced) != 1 || synced[0] != s.Path() {
				t.Fatalf("directory fsyncs before Update returned: %v, want one for %s", synced, s.Path())
			}
		})
	}
}

func TestUpdateThatCannotTakeTheLockSyncsNothing(t *testing.T) {
	s := openT(t, Options{LockTimeout: 50 * time.Millisecond})
	synced := 0
	s.syncDir = func(string) { synced++ }
	_, stdin, _ := startHelper(t, "hold", s.Dir(), "locked")
	defer stdin.Close()
	if err := s.Update(func(*State) error { return nil }); !is(err, Busy, CodeBusy) {
		t.Fatalf("err = %v, want %s/%s", err, Busy, CodeBusy)
	}
	if synced != 0 {
		t.Fatalf("%d directory fsyncs without the lock", synced)
	}
}

// TestAWriterKilledBeforeItsDirectoryFsyncLeavesItsDocumentToTheNext kills
// a writer process after its rename, while it waits in its directory
// fsync: the lock is already free, the next writer reads the new document,
// and its own directory fsync makes it durable.
func TestAWriterKilledBeforeItsDirectoryFsyncLeavesItsDocumentToTheNext(t *testing.T) {
	s := openT(t, Options{LockTimeout: 2 * time.Second})
	w, _, _ := startHelper(t, "renamed", s.Dir(), "renamed")
	start := time.Now()
	synced := 0
	s.syncDir = func(name string) { synced++; atomicfile.SyncDir(name) }
	if err := s.Update(func(st *State) error {
		if st.Meta.GenerationSeq != 1 || st.AliasCounters["renamed"] != 1 {
			t.Errorf("the next writer read %+v, want the killed writer's renamed document", st.Meta)
		}
		st.NextGeneration()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("the next writer waited %v for a lock the first should have released", waited)
	}
	w.Process.Kill()
	w.Wait()
	if synced != 1 {
		t.Fatalf("the next writer fsynced the directory %d times, want once", synced)
	}
	if tmp := temps(t, s.Dir()); len(tmp) != 0 {
		t.Fatalf("temporaries left: %v", tmp)
	}
}
