package store

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/slimgate/slim/tasks/internal/owner"
)

var update = flag.Bool("update", false, "rewrite testdata/state-v4.json and testdata/archive-v4.json from fullState and fullArchive")

// fullState returns a document in which every field of every type holds
// a value that is not its zero value, so the golden file pins every
// field's name. It holds fullArchive, as a transaction that read it
// would.
func fullState() *State {
	st := fullDocument()
	st.arc.a = fullArchive()
	return st
}

// fullArchive is the archive that goes with fullState: a settled job and
// what is kept of a deleted task.
func fullArchive() *Archive {
	at := func(sec int) time.Time { return time.Date(2026, 3, 1, 12, 0, sec, 500, time.UTC) }
	return &Archive{
		Version: Version,
		Jobs: map[string]*Job{"ses_done": {
			TaskID: "ses_done", ParentSessionID: "ses_parent", Agent: "fixer", Description: "fix the loader",
			Alias: "fix-1", State: JobReconciled, TerminalState: JobCompleted, Generation: 5, TaskGeneration: 1,
			LaunchedAt: at(1), CompletedAt: at(2), ResultSummary: "fixed",
		}},
		Tombstones:     map[string]*Tombstone{"ses_gone": {Epoch: 2, At: at(20), Reason: "session.deleted", LastTerminal: &LastTerminal{State: JobError, Summary: "boom"}}},
		DeletionEpochs: map[string]int64{"ses_gone": 2},
	}
}

// plain is st without its archive, for comparing what a document holds.
func plain(st *State) *State {
	c := *st
	c.arc = archiveState{}
	return &c
}

func fullDocument() *State {
	at := func(sec int) time.Time { return time.Date(2026, 3, 1, 12, 0, sec, 500, time.UTC) }
	rev := int64(4)
	who := owner.Identity{PID: 4242, StartTime: 987654, BootID: "0f6c5cb8-1d6b-4c0e-9a43-5b0e7a0c1e11", Host: "devbox"}
	return &State{
		Meta: Meta{Version: Version, GenerationSeq: 7, LeaseSeq: 3, EpochSeq: 2, CreatedAt: at(0), Archive: ArchiveRef{Seq: 1, Jobs: []string{"ses_done"}}},
		Live: map[string]*Job{"ses_child": {
			TaskID: "ses_child", ParentSessionID: "ses_parent", Agent: "explorer",
			Description: "find the config loader", Objective: "find the config loader and list its callers",
			Alias: "exp-1", State: JobReconciled, TerminalState: JobCompleted,
			Generation: 7, TaskGeneration: 2, TerminalRevision: 4, ActivityRevision: 9,
			Background: true, TerminalUnreconciled: true, StatusUncertain: true, StatusUncertainSince: at(1),
			LastStatusError: "status map malformed", CancellationRequested: true, TimedOut: true,
			RecoverableAfterLiveBusy: true, DeadlineExceededAt: at(2),
			LaunchedAt: at(3), LastLaunchedAt: at(4), RunStartedAt: at(5), UpdatedAt: at(6), CompletedAt: at(7),
			LastUsedAt: at(8), LastLiveBusyAt: at(9), LastObservedAt: at(15), StopConfirmationStartedAt: at(10), LastErrorAt: at(11),
			ResultSummary: "config/load.go:12", ContextFiles: []ContextFile{{Path: "config/load.go", LineCount: 120, LastReadAt: at(12)}},
			TotalErrors: 1, TimeoutCount: 2,
			Provisional: true, ExternalOrigin: true, PluginLaunched: true, VerifiedRetainedRound: true, RecoveredWithoutPrompt: true,
			BaselineMessageID: "msg_01", Notification: Notification{Owed: true, Attempts: 1, Sent: true, LastAttemptAt: at(13), LastError: "transport: connection reset"},
		}},
		AliasCounters: map[string]int64{AliasKey("ses_parent", "exp"): 1},
		Orchestrators: map[string]*Orchestrator{"ses_parent": {FirstSeenAt: at(14), Agent: "orchestrator"}},
		Leases: map[string]*Lease{"ses_child": {
			TaskID: "ses_child", Kind: LeaseNotification, Token: "00112233445566778899aabbccddeeff", Seq: 3,
			Generation: 7, TerminalRevision: &rev, AcquiredAt: at(15), OpID: "op1", Owner: who,
			State: LeaseOrphaned, Note: "owner exited",
		}},
		Ops: map[string]*Op{"op1": {
			ID: "op1", Kind: OpNotification, TaskID: "ses_child", Generation: 7,
			LeaseToken: "00112233445566778899aabbccddeeff", Phase: PhaseOrphaned, ClientMessageID: "msg_omos_revive_1",
			Owner: who, CreatedAt: at(16), LocalDeadlineAt: at(17), SentAt: at(18), SettledAt: at(19),
			Outcome: OutcomeOrphaned, Error: "owner exited", CallerAnswered: true,
		}},
		Waits: map[string]*Wait{"ses_parent": {
			Status: WaitingForUser, ArmedAt: at(21), Reason: "run the migration by hand",
			BaselineUserMessageID: "msg_02", LastRearmIdentity: "msg_03",
		}},
		Wake:       map[string]*Wake{"ses_parent": {UnchangedWakeCount: 1, LastFingerprint: "fp", Stopped: true, ExpectingWakeBusy: true, LastWakeAt: at(22)}},
		Injections: map[string][]Injection{"ses_parent": {{TaskID: "ses_child", Generation: 7, TerminalRevision: 4, PromptShapeKey: "shape"}}},
	}
}

// zeroFields lists the fields under v that hold their zero value (maps
// and slices must be non-empty, pointers non-nil; times are leaves).
func zeroFields(path string, v reflect.Value) []string {
	if v.IsZero() {
		return []string{path}
	}
	var out []string
	switch v.Kind() {
	case reflect.Pointer:
		out = zeroFields(path, v.Elem())
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return nil
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				out = append(out, zeroFields(path+"."+f.Name, v.Field(i))...)
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return []string{path}
		}
		for it := v.MapRange(); it.Next(); {
			out = append(out, zeroFields(path+"[]", it.Value())...)
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		for i := range v.Len() {
			out = append(out, zeroFields(path+"[]", v.Index(i))...)
		}
	}
	return out
}

func TestTheGoldenDocumentCoversEveryField(t *testing.T) {
	if z := zeroFields("State", reflect.ValueOf(fullDocument())); len(z) != 0 {
		t.Fatalf("fullDocument leaves fields at their zero value, so the golden file does not pin their names: %v", z)
	}
	// The archive's job is settled, so some of its fields are zero; the
	// document's job pins every field of a job.
	a := *fullArchive()
	a.Jobs = nil
	if z := zeroFields("Archive", reflect.ValueOf(a)); len(z) != 1 || z[0] != "Archive.Jobs" {
		t.Fatalf("fullArchive leaves fields at their zero value, so the golden file does not pin their names: %v", z)
	}
}

// golden compares the indented encoding of v with the golden file name
// (rewriting it under -update) and returns the file's bytes.
func golden(t *testing.T, name string, v any) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("the encoding of a full %s changed; if that is intended, bump Version, keep the old file as a fixture of the old version, and regenerate with -update.\ngot:\n%s", name, got)
	}
	return want
}

func TestFieldNamesAreStable(t *testing.T) {
	doc := golden(t, "state-v4.json", fullDocument())
	arc := golden(t, "archive-v4.json", fullArchive())
	st, err := decode("state-v4.json", doc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st, fullDocument()) {
		t.Fatalf("decoding the golden document lost something:\n%+v", st)
	}
	a, err := decodeArchive("archive-v4.json", arc, st.Meta)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, fullArchive()) {
		t.Fatalf("decoding the golden archive lost something:\n%+v", a)
	}
}

func TestAFullDocumentSurvivesAnUpdateUnchanged(t *testing.T) {
	s := openT(t, Options{})
	if err := s.Update(func(st *State) error { *st = *fullState(); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.View(func(got *State) error {
		if !reflect.DeepEqual(plain(got), fullDocument()) {
			t.Fatalf("read back:\n%+v\nwant:\n%+v", plain(got), fullDocument())
		}
		if a := got.Archive(); !reflect.DeepEqual(a, fullArchive()) {
			t.Fatalf("archive read back:\n%+v\nwant:\n%+v", a, fullArchive())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesStatesThatBreakTheSchema(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*State)
	}{
		{"another version", func(s *State) { s.Meta.Version = 1 }},
		{"a negative sequence", func(s *State) { s.Meta.LeaseSeq = -1 }},
		{"a null job", func(s *State) { s.Live["x"] = nil }},
		{"a job under another key", func(s *State) { s.Live["x"] = s.Live["ses_child"] }},
		{"an unknown job state", func(s *State) { s.Live["ses_child"].State = "finished" }},
		{"an empty job state", func(s *State) { s.Live["ses_child"].State = "" }},
		{"a terminal state that is no outcome", func(s *State) { s.Live["ses_child"].TerminalState = JobRunning }},
		{"a generation never issued", func(s *State) { s.Live["ses_child"].Generation = 8 }},
		{"a negative alias counter", func(s *State) { s.AliasCounters["k"] = -1 }},
		{"a null orchestrator", func(s *State) { s.Orchestrators["o"] = nil }},
		{"a null lease", func(s *State) { s.Leases["x"] = nil }},
		{"a lease under another key", func(s *State) { s.Leases["x"] = s.Leases["ses_child"] }},
		{"an unknown lease kind", func(s *State) { s.Leases["ses_child"].Kind = "exclusive" }},
		{"an unknown lease state", func(s *State) { s.Leases["ses_child"].State = "expired" }},
		{"a lease without a token", func(s *State) { s.Leases["ses_child"].Token = "" }},
		{"a lease number never issued", func(s *State) { s.Leases["ses_child"].Seq = 4 }},
		{"a lease for a generation never issued", func(s *State) { s.Leases["ses_child"].Generation = 9 }},
		{"a null op", func(s *State) { s.Ops["x"] = nil }},
		{"an op under another key", func(s *State) { s.Ops["x"] = s.Ops["op1"] }},
		{"an unknown op kind", func(s *State) { s.Ops["op1"].Kind = "delete" }},
		{"an unknown phase", func(s *State) { s.Ops["op1"].Phase = "done" }},
		{"an unknown outcome", func(s *State) { s.Ops["op1"].Outcome = "ok" }},
		{"an op without a task", func(s *State) { s.Ops["op1"].TaskID = "" }},
		{"an op for a generation never issued", func(s *State) { s.Ops["op1"].Generation = 8 }},
		{"a null tombstone", func(s *State) { s.arc.a.Tombstones["x"] = nil }},
		{"a tombstone epoch never issued", func(s *State) { s.arc.a.Tombstones["ses_gone"].Epoch = 3 }},
		{"a deletion epoch never issued", func(s *State) { s.arc.a.DeletionEpochs["ses_gone"] = 3 }},
		{"a null archived job", func(s *State) { s.arc.a.Jobs["x"] = nil }},
		{"an archived job under another key", func(s *State) { s.arc.a.Jobs["x"] = s.arc.a.Jobs["ses_done"] }},
		{"an archived job of a generation never issued", func(s *State) { s.arc.a.Jobs["ses_done"].Generation = 8 }},
		{"an archive of another version", func(s *State) { s.arc.a.Version = 1 }},
		{"a null wait", func(s *State) { s.Waits["x"] = nil }},
		{"an unknown wait status", func(s *State) { s.Waits["ses_parent"].Status = "paused" }},
		{"a null wake", func(s *State) { s.Wake["x"] = nil }},
		{"an injection for a generation never issued", func(s *State) { s.Injections["ses_parent"][0].Generation = 8 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := fullState()
			c.mutate(s)
			if err := s.check(); err == nil {
				t.Fatal("check accepted it")
			}
		})
	}
	if err := fullState().check(); err != nil {
		t.Fatalf("the full document itself: %v", err)
	}
	launch := fullState()
	launch.Ops["op1"].Kind, launch.Ops["op1"].TaskID = OpLaunch, ""
	if err := launch.check(); err != nil {
		t.Fatalf("a launch op before its session exists: %v", err)
	}
}

func TestSequencesOnlyGoUp(t *testing.T) {
	s := NewState()
	for want := int64(1); want <= 3; want++ {
		if g := s.NextGeneration(); g != want {
			t.Fatalf("NextGeneration = %d, want %d", g, want)
		}
		if e := s.NextEpoch(); e != want {
			t.Fatalf("NextEpoch = %d, want %d", e, want)
		}
		if n := s.NextAliasNumber("ses_p", "exp"); n != want {
			t.Fatalf("NextAliasNumber = %d, want %d", n, want)
		}
	}
	if n := s.NextAliasNumber("ses_p", "fix"); n != 1 {
		t.Fatalf("another prefix starts at %d, want 1", n)
	}
	if n := s.NextAliasNumber("ses_q", "exp"); n != 1 {
		t.Fatalf("another parent starts at %d, want 1", n)
	}
}
