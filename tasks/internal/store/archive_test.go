package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// settledJob is a job Settled accepts.
func settledJob(id string, gen int64) *Job {
	return &Job{TaskID: id, ParentSessionID: "ses_parent", Agent: "explorer", Alias: "exp-" + id,
		State: JobReconciled, TerminalState: JobCompleted, Generation: gen, ResultSummary: "done " + id}
}

// archives lists the archive files in dir.
func archives(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ArchivePrefix+"*"+ArchiveSuffix))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

// onDisk decodes the document as it is on disk, without the store.
func onDisk(t *testing.T, path string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	data, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAVersion1DocumentIsReadAndMigratedOnTheFirstWrite(t *testing.T) {
	v1, err := os.ReadFile(filepath.Join("testdata", "state-v1.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The fixture as version 1 wrote it, plus settled jobs (more than
	// wait in a live document), as a scope that ran for a while holds.
	var doc map[string]any
	if err := json.Unmarshal(v1, &doc); err != nil {
		t.Fatal(err)
	}
	jobs := doc["jobs"].(map[string]any)
	for i := range maxSettledLive + 4 {
		id := fmt.Sprintf("ses_old%02d", i)
		jobs[id] = map[string]any{"taskID": id, "parentSessionID": "ses_parent", "agent": "explorer", "description": "old",
			"alias": "exp-" + strconv.Itoa(i+2), "state": "reconciled", "terminalState": "completed", "generation": 7}
	}
	v1, _ = json.Marshal(doc)
	s := openT(t, Options{})
	if err := os.WriteFile(s.Path(), v1, 0o600); err != nil {
		t.Fatal(err)
	}
	look := func(st *State) (all map[string]*Job, ts *Tombstone, epoch int64) {
		all = map[string]*Job{}
		for j := range st.Jobs() {
			c := *j
			all[j.TaskID] = &c
		}
		return all, st.Tombstone("ses_gone"), st.DeletionEpoch("ses_gone")
	}
	var before map[string]*Job
	if err := s.View(func(st *State) error {
		var ts *Tombstone
		var epoch int64
		before, ts, epoch = look(st)
		if len(before) != maxSettledLive+5 || ts == nil || ts.Reason != "session.deleted" || epoch != 2 {
			t.Fatalf("version 1 read as %d jobs, tombstone %+v, epoch %d", len(before), ts, epoch)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, s.Path()), v1) || len(archives(t, s.Dir())) != 0 {
		t.Fatal("reading a version 1 document changed the files")
	}
	// The first write migrates, even one that changes nothing.
	if err := s.Update(func(*State) error { return nil }); err != nil {
		t.Fatal(err)
	}
	disk := onDisk(t, s.Path())
	var meta Meta
	json.Unmarshal(disk["meta"], &meta)
	if _, ok := disk["tombstones"]; ok || meta.Version != Version || meta.Archive.Seq != 1 || len(meta.Archive.Jobs) != maxSettledLive+4 {
		t.Fatalf("after the first write: meta %+v, keys %v", meta, slices.Sorted(maps.Keys(disk)))
	}
	var live map[string]*Job
	json.Unmarshal(disk["jobs"], &live)
	if len(live) != 1 || live["ses_child"] == nil {
		t.Fatalf("the live document holds %d jobs, want the one that is not settled", len(live))
	}
	if got := archives(t, s.Dir()); !slices.Equal(got, []string{"archive-1.json"}) {
		t.Fatalf("archives %v", got)
	}
	if err := s.View(func(st *State) error {
		after, ts, epoch := look(st)
		if !reflect.DeepEqual(after, before) || ts == nil || epoch != 2 {
			t.Fatalf("the migrated scope reads differently: %d jobs, tombstone %+v, epoch %d", len(after), ts, epoch)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSettledJobsMoveToTheArchiveAndTransactionsOnLiveJobsLeaveItAlone(t *testing.T) {
	var last Timing
	s := openT(t, Options{Observe: func(tm Timing) { last = tm }})
	update := func(fn func(*State) error) {
		t.Helper()
		if err := s.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	// Up to maxSettledLive settled jobs wait in the live document.
	update(func(st *State) error {
		g := st.NextGeneration()
		st.Live["ses_run"] = &Job{TaskID: "ses_run", State: JobRunning, Generation: g}
		for i := range maxSettledLive {
			id := fmt.Sprintf("ses_%02d", i)
			st.Live[id] = settledJob(id, g)
		}
		return nil
	})
	if last.Archived || len(archives(t, s.Dir())) != 0 {
		t.Fatalf("%d settled jobs were archived at once (%+v)", maxSettledLive, last)
	}
	// One more moves them all.
	update(func(st *State) error { st.Live["ses_xx"] = settledJob("ses_xx", 1); return nil })
	if last.ArchiveBytes == 0 || !slices.Equal(archives(t, s.Dir()), []string{"archive-1.json"}) {
		t.Fatalf("the settled jobs were not archived: %+v, %v", last, archives(t, s.Dir()))
	}
	arc := filepath.Join(s.Dir(), "archive-1.json")
	before := snap(t, arc)
	// A transaction on a live job, and a look-up of a task that has no
	// job, never read or write the archive.
	update(func(st *State) error {
		if st.Job("ses_unknown") != nil || st.Job("ses_run") == nil {
			t.Fatal("Job found the wrong jobs")
		}
		st.Live["ses_run"].ActivityRevision++
		return nil
	})
	if last.Archived || !last.Wrote {
		t.Fatalf("a transaction on a live job: %+v", last)
	}
	before.same(t, arc)
	if err := s.View(func(st *State) error {
		if len(st.Live) != 1 || st.ArchivedJobs() != maxSettledLive+1 || st.arc.a != nil {
			t.Fatalf("live %d, archived %d, archive read %v", len(st.Live), st.ArchivedJobs(), st.arc.a != nil)
		}
		n := 0
		for range st.Jobs() {
			n++
		}
		if n != maxSettledLive+2 {
			t.Fatalf("Jobs walked %d jobs", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// A relaunched archived job, and one that gets a lease, move back to
	// the live document; the old archive file goes.
	update(func(st *State) error {
		j := st.Job("ses_03")
		j.State, j.TerminalState = JobRunning, ""
		_, err := st.AcquireLease(LeaseRequest{TaskID: "ses_04", Kind: LeaseRelaunch, Token: "tok"}, time.Now())
		return err
	})
	if got := archives(t, s.Dir()); !slices.Equal(got, []string{"archive-2.json"}) {
		t.Fatalf("archives after a rewrite: %v", got)
	}
	if err := s.View(func(st *State) error {
		if st.Live["ses_03"] == nil || st.Live["ses_04"] == nil || st.Archive().Jobs["ses_03"] != nil || st.Archive().Jobs["ses_04"] != nil {
			t.Fatal("a job that is no longer settled stayed archived")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Deleting an archived job deletes it from the archive.
	update(func(st *State) error { st.DeleteJob("ses_05"); return nil })
	if err := s.View(func(st *State) error {
		if st.Job("ses_05") != nil || slices.Contains(st.Meta.Archive.Jobs, "ses_05") {
			t.Fatal("the deleted job is still there")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestAJobInBothFilesReadsOnceAsItsLiveCopy(t *testing.T) {
	s := openT(t, Options{})
	if err := s.Update(func(st *State) error {
		g := st.NextGeneration()
		for i := range maxSettledLive + 1 {
			id := fmt.Sprintf("ses_%02d", i)
			st.Live[id] = settledJob(id, g)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// What a writer that moved ses_00 back to the live document without
	// dropping it from the archive would leave: both files hold it.
	doc := onDisk(t, s.Path())
	live := map[string]*Job{"ses_00": {TaskID: "ses_00", State: JobRunning, Generation: 1, Description: "live copy"}}
	doc["jobs"], _ = json.Marshal(live)
	data, _ := json.Marshal(doc)
	if err := os.WriteFile(s.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(st *State) error {
		seen := 0
		for j := range st.Jobs() {
			if j.TaskID == "ses_00" {
				seen++
				if j.Description != "live copy" {
					t.Fatalf("the archived copy won: %+v", j)
				}
			}
		}
		if seen != 1 || st.Job("ses_00").Description != "live copy" {
			t.Fatalf("ses_00 seen %d times", seen)
		}
		return nil
	}
	if err := s.View(check); err != nil {
		t.Fatal(err)
	}
	// The next transaction that writes the archive drops the other copy.
	if err := s.Update(func(st *State) error {
		check(st)
		st.DeleteJob("ses_01")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(st *State) error {
		if st.Archive().Jobs["ses_00"] != nil || slices.Contains(st.Meta.Archive.Jobs, "ses_00") || st.Live["ses_00"] == nil {
			t.Fatal("the archived copy of a live job survived a rewrite of the archive")
		}
		return check(st)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestAnArchiveThatCannotBeUsedFailsWhatAsksForIt(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
		kind Kind
		code string
	}{
		{"not JSON", write(`{not json`), Corrupt, CodeCorrupt},
		{"another version", write(`{"version":5}`), Unsupported, CodeVersion},
		{"jobs the document does not list", write(`{"version":2,"jobs":{}}`), Corrupt, CodeCorrupt},
		{"missing", func(t *testing.T, path string) { os.Remove(path) }, Corrupt, CodeCorrupt},
		{"a symbolic link", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "a.json")
			os.Rename(path, target)
			os.Symlink(target, path)
		}, Corrupt, CodeNotRegular},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openT(t, Options{})
			if err := s.Update(func(st *State) error {
				g := st.NextGeneration()
				st.Live["ses_run"] = &Job{TaskID: "ses_run", State: JobRunning, Generation: g}
				st.Archive().Jobs["ses_done"] = settledJob("ses_done", g)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			arc := filepath.Join(s.Dir(), "archive-1.json")
			c.make(t, arc)
			doc := snap(t, s.Path())
			ask := func(st *State) error { st.Job("ses_done"); return nil }
			for i, err := range []error{s.View(ask), s.Update(ask)} {
				if !is(err, c.kind, c.code) {
					t.Errorf("%s: err = %v, want %s/%s", []string{"View", "Update"}[i], err, c.kind, c.code)
				}
			}
			doc.same(t, s.Path())
			// What does not need the archive still works, in an Update;
			// a View opens the archive at once, so it fails when the file
			// cannot be opened.
			if err := s.Update(func(st *State) error { st.Live["ses_run"].ActivityRevision++; return nil }); err != nil {
				t.Errorf("an Update on a live job: %v", err)
			}
		})
	}
}

func TestViewsWhileWritersReplaceTheArchiveAlwaysReadAWholeVersion(t *testing.T) {
	s := openT(t, Options{})
	const n = 40
	if err := s.Update(func(st *State) error { writeMoveRound(st, n); return nil }); err != nil {
		t.Fatal(err)
	}
	w := helper(t, "move", s.Dir(), strconv.Itoa(n))
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { w.Process.Kill(); w.Wait() }()
	deadline := time.Now().Add(2 * time.Second)
	views := 0
	for time.Now().Before(deadline) {
		if err := s.View(func(st *State) error { return checkMoveRound(st, n) }); err != nil {
			t.Fatalf("view %d: %v", views, err)
		}
		views++
	}
	t.Logf("%d views", views)
}

// writeMoveRound rewrites n jobs for the next round: job i is settled in
// the rounds where i+round is even and running in the others, so every
// round moves every job across, and every job carries the round's
// number, which is also the generation sequence.
func writeMoveRound(st *State, n int) {
	round := st.NextGeneration()
	for i := range n {
		id := "ses_" + strconv.Itoa(i)
		j := &Job{TaskID: id, State: JobRunning, Generation: round, Description: "round " + strconv.FormatInt(round, 10),
			ResultSummary: strings.Repeat("x", 1000)}
		if (int64(i)+round)%2 == 0 {
			j.State, j.TerminalState = JobReconciled, JobCompleted
		}
		st.DeleteJob(id)
		st.Live[id] = j
	}
}

// checkMoveRound reports whether st is one whole round of writeMoveRound:
// every job once, all of the round, the settled ones archived.
func checkMoveRound(st *State, n int) error {
	round := st.Meta.GenerationSeq
	seen := map[string]int{}
	for j := range st.Jobs() {
		seen[j.TaskID]++
		if j.Generation != round || j.Description != "round "+strconv.FormatInt(round, 10) {
			return fmt.Errorf("job %s is from %q, the document from round %d", j.TaskID, j.Description, round)
		}
		if archived := st.Live[j.TaskID] == nil; archived != st.Settled(j) {
			return fmt.Errorf("job %s (%s) archived: %v", j.TaskID, j.State, archived)
		}
	}
	if len(seen) != n {
		return fmt.Errorf("%d jobs, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			return fmt.Errorf("job %s seen %d times", id, k)
		}
	}
	return nil
}

// TestAWriterKilledWhileMovingJobsLosesAndDuplicatesNone kills a writer
// whose every transaction moves half the jobs into the archive and the
// other half out of it: some kills land between the new archive and the
// document that names it, the rest anywhere. Every time, the scope reads
// as one whole round, each job once.
func TestAWriterKilledWhileMovingJobsLosesAndDuplicatesNone(t *testing.T) {
	const n = 400
	kills := 16
	if testing.Short() {
		kills = 6
	}
	s := openT(t, Options{LockTimeout: 10 * time.Second})
	if err := s.Update(func(st *State) error { writeMoveRound(st, n); return nil }); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Logf("kill times from seed %d", seed)
	between := 0
	for k := range kills {
		w := helper(t, "move", s.Dir(), strconv.Itoa(n), "pause")
		runUntil(t, w, "archived", 1+rng.IntN(3))
		// Half the kills land while the helper waits between its new
		// archive and its document; the others a little later, anywhere
		// in the rest of that round or the next.
		if k%2 == 1 {
			time.Sleep(time.Duration(rng.IntN(8000)) * time.Microsecond)
		} else {
			between++
		}
		kill(t, w)
		if err := s.View(func(st *State) error { return checkMoveRound(st, n) }); err != nil {
			t.Fatalf("kill %d: %v", k, err)
		}
	}
	// The next writer removes the archives and temporaries the killed
	// ones left and reads on.
	if err := s.Update(func(st *State) error { writeMoveRound(st, n); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(st *State) error { return checkMoveRound(st, n) }); err != nil {
		t.Fatal(err)
	}
	var ref ArchiveRef
	s.View(func(st *State) error { ref = st.Meta.Archive; return nil })
	if got := archives(t, s.Dir()); !slices.Equal(got, []string{archiveFile(ref.Seq)}) || len(temps(t, s.Dir())) != 0 {
		t.Fatalf("left behind: archives %v, temporaries %v", got, temps(t, s.Dir()))
	}
	t.Logf("%d kills, %d between an archive and its document", kills, between)
}

// An older scope (document and archive) reads as it is, the fields later
// versions added as their zero values, and the next write rewrites both
// in this version.
func TestAnOlderScopeIsReadAsItIsAndWrittenInThisVersion(t *testing.T) {
	for _, tt := range []struct {
		version int
		lacks   func(*State) // clears what the version does not hold
	}{
		{2, func(st *State) {
			for _, j := range st.Live {
				j.Notification.Owed, j.Notification.LastError, j.LastObservedAt = false, "", time.Time{}
			}
			for _, o := range st.Orchestrators {
				o.Agent = ""
			}
		}},
		{3, func(st *State) {
			for _, j := range st.Live {
				j.LastObservedAt = time.Time{}
			}
		}},
	} {
		t.Run(fmt.Sprintf("version %d", tt.version), func(t *testing.T) {
			doc, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("state-v%d.json", tt.version)))
			if err != nil {
				t.Fatal(err)
			}
			arc, err := os.ReadFile(filepath.Join("testdata", fmt.Sprintf("archive-v%d.json", tt.version)))
			if err != nil {
				t.Fatal(err)
			}
			s := openT(t, Options{})
			if err := os.WriteFile(s.Path(), doc, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(s.Dir(), "archive-1.json"), arc, 0o600); err != nil {
				t.Fatal(err)
			}
			want := fullDocument()
			tt.lacks(want)
			read := func() {
				t.Helper()
				if err := s.View(func(st *State) error {
					if !reflect.DeepEqual(plain(st), want) {
						t.Fatalf("the version %d document reads as\n%+v\nwant\n%+v", tt.version, plain(st), want)
					}
					if a := st.Archive(); !reflect.DeepEqual(a, fullArchive()) {
						t.Fatalf("the version %d archive reads as\n%+v", tt.version, a)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			read()
			if !bytes.Equal(mustRead(t, s.Path()), doc) || !bytes.Equal(mustRead(t, filepath.Join(s.Dir(), "archive-1.json")), arc) {
				t.Fatal("reading an older scope changed its files")
			}
			// A write that reads the archive rewrites both.
			if err := s.Update(func(st *State) error { st.Archive(); return nil }); err != nil {
				t.Fatal(err)
			}
			var meta Meta
			json.Unmarshal(onDisk(t, s.Path())["meta"], &meta)
			if meta.Version != Version || meta.Archive.Seq != 2 {
				t.Fatalf("after a write: meta %+v, want version %d and a new archive", meta, Version)
			}
			var av struct{ Version int }
			json.Unmarshal(mustRead(t, filepath.Join(s.Dir(), "archive-2.json")), &av)
			if av.Version != Version {
				t.Fatalf("the rewritten archive has version %d", av.Version)
			}
			want.Meta.Archive.Seq = 2
			read()
		})
	}
}
