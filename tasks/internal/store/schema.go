package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Version is the schema version this build writes. It reads Version,
// version 3 (the same layout without the field version 4 added: a job's
// LastObservedAt), version 2 (without what version 3 added too: a job
// notification's Owed and LastError, and an orchestrator's Agent) and
// version 1 (one document holding everything), and migrates them on its
// first write; a document or archive of any other version is refused
// (Unsupported), never rewritten.
const Version = 4

// State is what a transaction sees of one scope: every record the task
// tools share across processes. It comes from two files: the live
// document (state.json), which every transaction reads and the only one
// most rewrite, and the archive (Archive), which holds the settled jobs
// (see Settled), the tombstones and the deletion epochs, and is read only
// when a transaction asks for something in it. A transaction gets the
// decoded state, changes it in place and the store writes back what
// changed. Every map is non-nil when fn sees it. The JSON field names are
// part of the on-disk format and stay as they are; adding a field a
// reader of this version would not know needs a new Version, because a
// document with unknown fields is refused.
//
// Look a job up with Job and walk every job with Jobs: Live holds only the
// jobs that are not settled (and settled ones not yet moved), so a job
// missing from Live may still be archived.
type State struct {
	Meta Meta `json:"meta"`
	// Live holds the jobs of the live document by task ID (the child
	// session ID): every job that is running, unacknowledged, uncertain or
	// leased, and settled ones until they move to the archive. A job a
	// transaction adds goes here; one that is also archived is superseded
	// by this copy.
	Live map[string]*Job `json:"jobs"`
	// AliasCounters holds the highest alias number issued per parent and
	// prefix, keyed by AliasKey. Counters only go up, so an alias is never
	// issued twice, whichever process issues it.
	AliasCounters map[string]int64 `json:"aliasCounters"`
	// Orchestrators are the managed parent sessions, by session ID.
	Orchestrators map[string]*Orchestrator `json:"orchestrators"`
	// Leases by task ID: at most one per task, of any kind. Deleting a
	// job never deletes its lease.
	Leases map[string]*Lease `json:"leases"`
	// Ops is the journal of remote writes, by op ID.
	Ops map[string]*Op `json:"ops"`
	// Waits by parent session ID: the user-wait latch.
	Waits map[string]*Wait `json:"waits"`
	// Wake by session ID: the wake scheduler's memory.
	Wake map[string]*Wake `json:"wake"`
	// Injections by parent session ID: terminal runs shown to the parent
	// and not yet acknowledged.
	Injections map[string][]Injection `json:"injections"`

	// The archive as this transaction sees it (see archive.go).
	arc archiveState
}

// Archive is the part of a scope's records that the tools rarely need:
// the settled jobs, and what is kept of deleted tasks. It is its own file
// (archive-<seq>.json, named by Meta.Archive), written only by a
// transaction that changed it, so the transactions on running tasks never
// read or rewrite it.
type Archive struct {
	Version int `json:"version"`
	// Jobs holds the settled jobs by task ID (see Settled).
	Jobs map[string]*Job `json:"jobs"`
	// Tombstones by task ID: tasks that were dropped or deleted. A
	// tombstone counts only while the task has no job (see
	// State.Tombstone): a proven new launch supersedes it.
	Tombstones map[string]*Tombstone `json:"tombstones"`
	// DeletionEpochs holds, per task ID, the epoch of its latest drop or
	// deletion.
	DeletionEpochs map[string]int64 `json:"deletionEpochs"`
}

// ArchiveRef names the archive file of a document and lists its jobs, so
// that a transaction can tell whether a task is archived, and how many
// settled jobs the scope keeps, without reading it. Retention bounds the
// list (a few hundred IDs).
type ArchiveRef struct {
	// Seq numbers the archive file, archive-<seq>.json; every new
	// version of the archive gets the next number. 0: no archive.
	Seq int64 `json:"seq"`
	// Jobs holds the task IDs of the archived jobs, sorted.
	Jobs []string `json:"jobs"`
}

// IsZero reports whether r names no archive and no job; such a reference
// is left out of the document.
func (r ArchiveRef) IsZero() bool { return r.Seq == 0 && len(r.Jobs) == 0 }

// has reports whether the archive holds a job of task id.
func (r ArchiveRef) has(id string) bool {
	_, ok := slices.BinarySearch(r.Jobs, id)
	return ok
}

// Meta is the document's header: its version and the counters every
// process draws from.
type Meta struct {
	Version int `json:"version"`
	// GenerationSeq is the last run generation issued (NextGeneration).
	GenerationSeq int64 `json:"generationSeq"`
	// LeaseSeq counts leases ever acquired.
	LeaseSeq int64 `json:"leaseSeq"`
	// EpochSeq is the last deletion epoch issued (NextEpoch).
	EpochSeq int64 `json:"epochSeq"`
	// CreatedAt is when the document was first written.
	CreatedAt time.Time `json:"createdAt,omitzero"`
	// Archive names the archive that goes with this document.
	Archive ArchiveRef `json:"archive,omitzero"`
}

// JobState is a job's lifecycle state.
type JobState string

// The lifecycle states. Completed, error and cancelled are the canonical
// terminal states; stopped means the run ended without terminal output,
// which is not success; reconciled is a terminal job whose result the
// parent has acknowledged (TerminalState keeps the outcome).
const (
	JobRunning    JobState = "running"
	JobCompleted  JobState = "completed"
	JobError      JobState = "error"
	JobCancelled  JobState = "cancelled"
	JobStopped    JobState = "stopped"
	JobReconciled JobState = "reconciled"
)

// Job is one background task: a child session and its current run.
type Job struct {
	TaskID          string `json:"taskID"`
	ParentSessionID string `json:"parentSessionID"`
	Agent           string `json:"agent"`
	// Description is the short label; Objective the full, untruncated
	// instruction.
	Description string   `json:"description"`
	Objective   string   `json:"objective,omitempty"`
	Alias       string   `json:"alias"`
	State       JobState `json:"state"`
	// TerminalState is the outcome kept once the job is reconciled.
	TerminalState JobState `json:"terminalState,omitempty"`
	// Generation is the run identity, drawn from Meta.GenerationSeq on
	// every launch and relaunch.
	Generation int64 `json:"generation"`
	// TaskGeneration counts this task's own runs.
	TaskGeneration int64 `json:"taskGeneration,omitempty"`
	// TerminalRevision fences terminal publications within one run.
	TerminalRevision int64 `json:"terminalRevision,omitempty"`
	// ActivityRevision fences observations made while verifying a cancel.
	ActivityRevision int64 `json:"activityRevision,omitempty"`
	// Background is true only when the launch asked for background.
	Background           bool `json:"background,omitempty"`
	TerminalUnreconciled bool `json:"terminalUnreconciled,omitempty"`
	// StatusUncertain: the live status could not be confirmed. It never
	// means completion.
	StatusUncertain          bool      `json:"statusUncertain,omitempty"`
	StatusUncertainSince     time.Time `json:"statusUncertainSince,omitzero"`
	LastStatusError          string    `json:"lastStatusError,omitempty"`
	CancellationRequested    bool      `json:"cancellationRequested,omitempty"`
	TimedOut                 bool      `json:"timedOut,omitempty"`
	RecoverableAfterLiveBusy bool      `json:"recoverableAfterLiveBusy,omitempty"`
	// DeadlineExceededAt marks a hard wall-clock timeout; once set,
	// nothing replaces it.
	DeadlineExceededAt time.Time `json:"deadlineExceededAt,omitzero"`
	LaunchedAt         time.Time `json:"launchedAt,omitzero"`
	LastLaunchedAt     time.Time `json:"lastLaunchedAt,omitzero"`
	RunStartedAt       time.Time `json:"runStartedAt,omitzero"`
	UpdatedAt          time.Time `json:"updatedAt,omitzero"`
	CompletedAt        time.Time `json:"completedAt,omitzero"`
	LastUsedAt         time.Time `json:"lastUsedAt,omitzero"`
	LastLiveBusyAt     time.Time `json:"lastLiveBusyAt,omitzero"`
	// LastObservedAt is when a reconciliation pass that could not look
	// at all of its parent's jobs last looked at this one: such a pass
	// takes the least recently observed first, so every job is reached
	// in turn.
	LastObservedAt            time.Time     `json:"lastObservedAt,omitzero"`
	StopConfirmationStartedAt time.Time     `json:"stopConfirmationStartedAt,omitzero"`
	LastErrorAt               time.Time     `json:"lastErrorAt,omitzero"`
	ResultSummary             string        `json:"resultSummary,omitempty"`
	ContextFiles              []ContextFile `json:"contextFiles,omitempty"`
	TotalErrors               int           `json:"totalErrors,omitempty"`
	TimeoutCount              int           `json:"timeoutCount,omitempty"`
	// Provenance of placeholders, adopted and restored sessions.
	Provisional            bool `json:"provisional,omitempty"`
	ExternalOrigin         bool `json:"externalOrigin,omitempty"`
	PluginLaunched         bool `json:"pluginLaunched,omitempty"`
	VerifiedRetainedRound  bool `json:"verifiedRetainedRound,omitempty"`
	RecoveredWithoutPrompt bool `json:"recoveredWithoutPrompt,omitempty"`
	// BaselineMessageID is the last child message before the current
	// run's prompt; the run's answer is looked for after it.
	BaselineMessageID string `json:"baselineMessageID,omitempty"`
	// Notification tracks the parent notification of the current run.
	Notification Notification `json:"notification,omitzero"`
}

// ContextFile is a file the child read, for the reuse budget.
type ContextFile struct {
	Path       string    `json:"path"`
	LineCount  int       `json:"lineCount"`
	LastReadAt time.Time `json:"lastReadAt,omitzero"`
}

// Notification tracks the parent notification of a run: the message that
// tells the parent session a run slim started has ended. A run the host's
// own task tool started needs none, as its answer reaches the parent as
// that tool's output.
type Notification struct {
	// Owed: the parent learns of this run's end only from slim (a run
	// slim launched or revived).
	Owed          bool      `json:"owed,omitempty"`
	Attempts      int       `json:"attempts"`
	Sent          bool      `json:"sent"`
	LastAttemptAt time.Time `json:"lastAttemptAt,omitzero"`
	// LastError is why the last attempt was not accepted.
	LastError string `json:"lastError,omitempty"`
}

// Orchestrator is a managed parent session.
type Orchestrator struct {
	FirstSeenAt time.Time `json:"firstSeenAt"`
	// Agent is the orchestrator agent the session last called the task
	// tools as: the agent a message slim sends to the session runs as.
	Agent string `json:"agent,omitempty"`
}

// Tombstone records a dropped or deleted task. It blocks late output and
// rehydration for the task until a proven new launch clears it.
type Tombstone struct {
	Epoch        int64         `json:"epoch"`
	At           time.Time     `json:"at"`
	Reason       string        `json:"reason"`
	LastTerminal *LastTerminal `json:"lastTerminal,omitempty"`
}

// LastTerminal is the last terminal result of a tombstoned task.
type LastTerminal struct {
	State   JobState `json:"state"`
	Summary string   `json:"summary"`
}

// WaitStatus is the state of a parent's user-wait latch.
type WaitStatus string

// The wait statuses. A cleared wait keeps its entry so the identity of
// the message that cleared it is remembered.
const (
	WaitingForUser WaitStatus = "waiting-for-user"
	WaitCleared    WaitStatus = "cleared"
)

// Wait is a parent's user-wait latch.
type Wait struct {
	Status                WaitStatus `json:"status"`
	ArmedAt               time.Time  `json:"armedAt,omitzero"`
	Reason                string     `json:"reason,omitempty"`
	BaselineUserMessageID string     `json:"baselineUserMessageID,omitempty"`
	// LastRearmIdentity is the last user message seen for the parent;
	// seeing it again does not clear the wait.
	LastRearmIdentity string `json:"lastRearmIdentity,omitempty"`
}

// Wake is the wake scheduler's memory of one session.
type Wake struct {
	UnchangedWakeCount int       `json:"unchangedWakeCount"`
	LastFingerprint    string    `json:"lastFingerprint,omitempty"`
	Stopped            bool      `json:"stopped"`
	ExpectingWakeBusy  bool      `json:"expectingWakeBusy"`
	LastWakeAt         time.Time `json:"lastWakeAt,omitzero"`
}

// Injection is a terminal run shown to the parent and awaiting its
// acknowledgement.
type Injection struct {
	TaskID           string `json:"taskID"`
	Generation       int64  `json:"generation"`
	TerminalRevision int64  `json:"terminalRevision,omitempty"`
	PromptShapeKey   string `json:"promptShapeKey"`
}

// NewState returns an empty document of the current version.
func NewState() *State {
	s := &State{Meta: Meta{Version: Version}}
	s.fill()
	return s
}

// fill makes every nil map empty, so a transaction can write into any of
// them.
func (s *State) fill() {
	if s.Live == nil {
		s.Live = map[string]*Job{}
	}
	if s.AliasCounters == nil {
		s.AliasCounters = map[string]int64{}
	}
	if s.Orchestrators == nil {
		s.Orchestrators = map[string]*Orchestrator{}
	}
	if s.Leases == nil {
		s.Leases = map[string]*Lease{}
	}
	if s.Ops == nil {
		s.Ops = map[string]*Op{}
	}
	if s.Waits == nil {
		s.Waits = map[string]*Wait{}
	}
	if s.Wake == nil {
		s.Wake = map[string]*Wake{}
	}
	if s.Injections == nil {
		s.Injections = map[string][]Injection{}
	}
}

// NextGeneration issues the next run generation. Generations are global
// to the scope and strictly increasing, so gaps are normal.
func (s *State) NextGeneration() int64 {
	s.Meta.GenerationSeq++
	return s.Meta.GenerationSeq
}

// NextEpoch issues the next deletion epoch.
func (s *State) NextEpoch() int64 {
	s.Meta.EpochSeq++
	return s.Meta.EpochSeq
}

// AliasKey is the AliasCounters key of a parent and an alias prefix.
func AliasKey(parent, prefix string) string { return parent + "\x00" + prefix }

// NextAliasNumber issues the next alias number for a parent and prefix,
// starting at 1.
func (s *State) NextAliasNumber(parent, prefix string) int64 {
	k := AliasKey(parent, prefix)
	s.AliasCounters[k]++
	return s.AliasCounters[k]
}

// legacy holds the two maps a version 1 document kept beside the jobs,
// which version 2 keeps in the archive.
type legacy struct {
	Tombstones     map[string]*Tombstone `json:"tombstones"`
	DeletionEpochs map[string]int64      `json:"deletionEpochs"`
}

// docV1 is what decodeJSON reads: the live document of either version,
// with the fields only version 1 has.
type docV1 struct {
	State
	legacy
}

// decode parses a live document. A document that is not one JSON object
// of this schema (unknown fields and trailing data included) is Corrupt;
// one of another version than 1 or Version is Unsupported. A version 1
// document is migrated in memory: its tombstones and deletion epochs form
// the archive, which the next Update writes together with the document in
// this version's layout (its settled jobs move to the archive then). The
// documents the store writes take decodeFast; anything it does not read
// exactly as encoding/json would goes to decodeJSON, which decides. The
// State's strings may be slices of data, which must not be written
// afterwards.
func decode(path string, data []byte) (*State, error) {
	s, old, ok := decodeFast(data)
	if !ok {
		var err error
		s, old, err = decodeJSON(data)
		if err != nil {
			return nil, decodeErr(path, data, err)
		}
	}
	switch v := s.Meta.Version; v {
	case 2, 3:
		// Versions 3 and 4 only added fields: an older document reads as
		// is and is written in this version by the next Update.
		s.Meta.Version = Version
		fallthrough
	case Version:
		if old.Tombstones != nil || old.DeletionEpochs != nil {
			return nil, newErr(Corrupt, CodeCorrupt, nil, "%s is a version %d document with the tombstones of version 1 in it; it was left as it is", path, v)
		}
	case 1:
		if !s.Meta.Archive.IsZero() {
			return nil, newErr(Corrupt, CodeCorrupt, nil, "%s is a version 1 document that names an archive; it was left as it is", path)
		}
		s.migrate(old)
	case 0:
		return nil, newErr(Corrupt, CodeCorrupt, nil, "%s has no schema version; it was left as it is", path)
	default:
		return nil, unsupported(path, s.Meta.Version)
	}
	s.fill()
	if err := s.check(); err != nil {
		return nil, newErr(Corrupt, CodeCorrupt, err, "%s breaks the schema; it was left as it is", path)
	}
	return s, nil
}

// decodeJSON decodes a document with encoding/json, refusing unknown
// fields and anything after the document.
func decodeJSON(data []byte) (*State, legacy, error) {
	d := new(docV1)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(d)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("data after the document")
		}
	}
	return &d.State, d.legacy, err
}

// decodeErr is the error of a document that does not decode.
func decodeErr(path string, data []byte, err error) *Error {
	// Tell a newer schema from damage: a document that names another
	// version is Unsupported even when this build cannot decode it.
	var probe struct {
		Meta struct {
			Version int `json:"version"`
		} `json:"meta"`
	}
	if json.Unmarshal(data, &probe) == nil && !readable(probe.Meta.Version) {
		return unsupported(path, probe.Meta.Version)
	}
	return newErr(Corrupt, CodeCorrupt, err, "%s does not decode; it was left as it is", path)
}

// readable reports whether v is a schema version this build reads.
func readable(v int) bool { return v >= 1 && v <= Version }

func unsupported(path string, v int) *Error {
	return newErr(Unsupported, CodeVersion, nil, "%s has schema version %d; this slim reads versions 1 to %d (a newer slim wrote it?); it was left as it is", path, v, Version)
}

// check verifies what every state must satisfy: every entry present and
// filed under its own key, known enumeration values, and counters at
// least as large as every number drawn from them (so a document that went
// back in time cannot issue a generation twice). The archive is checked
// too when the transaction has it.
func (s *State) check() error {
	m := s.Meta
	if m.Version != Version {
		return fmt.Errorf("meta.version is %d, want %d", m.Version, Version)
	}
	if m.GenerationSeq < 0 || m.LeaseSeq < 0 || m.EpochSeq < 0 || m.Archive.Seq < 0 {
		return errors.New("meta: a negative sequence")
	}
	if !slices.IsSorted(m.Archive.Jobs) || len(slices.Compact(slices.Clone(m.Archive.Jobs))) != len(m.Archive.Jobs) {
		return errors.New("meta.archive.jobs is not a sorted list of distinct IDs")
	}
	if m.Archive.Seq == 0 && len(m.Archive.Jobs) != 0 {
		return errors.New("meta.archive lists jobs but names no archive")
	}
	gen := m.gen
	if err := checkJobs("jobs", s.Live, gen); err != nil {
		return err
	}
	for k, n := range s.AliasCounters {
		if n < 0 {
			return fmt.Errorf("aliasCounters[%q] is negative", k)
		}
	}
	for k, o := range s.Orchestrators {
		if o == nil {
			return fmt.Errorf("orchestrators[%q] is null", k)
		}
	}
	for k, l := range s.Leases {
		switch {
		case l == nil:
			return fmt.Errorf("leases[%q] is null", k)
		case l.TaskID != k:
			return fmt.Errorf("leases[%q] holds task %q", k, l.TaskID)
		case !l.Kind.known():
			return fmt.Errorf("leases[%q]: unknown kind %q", k, l.Kind)
		case !l.State.known():
			return fmt.Errorf("leases[%q]: unknown state %q", k, l.State)
		case l.Token == "":
			return fmt.Errorf("leases[%q] has no token", k)
		case l.Seq < 0 || l.Seq > m.LeaseSeq:
			return fmt.Errorf("leases[%q]: seq %d outside 0..%d (meta.leaseSeq)", k, l.Seq, m.LeaseSeq)
		}
		if err := gen("leases["+k+"]", l.Generation); err != nil {
			return err
		}
	}
	for k, o := range s.Ops {
		switch {
		case o == nil:
			return fmt.Errorf("ops[%q] is null", k)
		case o.ID != k:
			return fmt.Errorf("ops[%q] holds op %q", k, o.ID)
		case !o.Kind.known():
			return fmt.Errorf("ops[%q]: unknown kind %q", k, o.Kind)
		case !o.Phase.known():
			return fmt.Errorf("ops[%q]: unknown phase %q", k, o.Phase)
		case o.Outcome != "" && !o.Outcome.known():
			return fmt.Errorf("ops[%q]: unknown outcome %q", k, o.Outcome)
		case o.TaskID == "" && o.Kind != OpLaunch:
			return fmt.Errorf("ops[%q]: a %s op names no task", k, o.Kind)
		}
		if err := gen("ops["+k+"]", o.Generation); err != nil {
			return err
		}
	}
	for k, w := range s.Waits {
		switch {
		case w == nil:
			return fmt.Errorf("waits[%q] is null", k)
		case w.Status != WaitingForUser && w.Status != WaitCleared:
			return fmt.Errorf("waits[%q]: unknown status %q", k, w.Status)
		}
	}
	for k, w := range s.Wake {
		if w == nil {
			return fmt.Errorf("wake[%q] is null", k)
		}
	}
	for k, list := range s.Injections {
		for i, in := range list {
			if err := gen(fmt.Sprintf("injections[%q][%d]", k, i), in.Generation); err != nil {
				return err
			}
		}
	}
	if a := s.arc.a; a != nil {
		if err := a.check(m); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	}
	return nil
}

// gen checks that where's generation g was already issued by m.
func (m Meta) gen(where string, g int64) error {
	if g < 0 || g > m.GenerationSeq {
		return fmt.Errorf("%s: generation %d outside 0..%d (meta.generationSeq)", where, g, m.GenerationSeq)
	}
	return nil
}

// checkJobs checks a map of jobs: none null, each under its own key, in a
// known state, of a generation already issued.
func checkJobs(field string, jobs map[string]*Job, gen func(string, int64) error) error {
	for k, j := range jobs {
		switch {
		case j == nil:
			return fmt.Errorf("%s[%q] is null", field, k)
		case j.TaskID != k:
			return fmt.Errorf("%s[%q] holds task %q", field, k, j.TaskID)
		case !j.State.known() || j.State == "":
			return fmt.Errorf("%s[%q]: unknown state %q", field, k, j.State)
		case j.TerminalState != "" && !j.TerminalState.terminal():
			return fmt.Errorf("%s[%q]: terminalState %q is not an outcome", field, k, j.TerminalState)
		}
		if err := gen(field+"["+k+"]", j.Generation); err != nil {
			return err
		}
	}
	return nil
}

// check verifies an archive against the header of the document that
// names it: its version, its jobs as the document's are checked, and
// epochs already issued.
func (a *Archive) check(m Meta) error {
	if a.Version != Version {
		return fmt.Errorf("version is %d, want %d", a.Version, Version)
	}
	if err := checkJobs("jobs", a.Jobs, m.gen); err != nil {
		return err
	}
	epoch := func(where string, e int64) error {
		if e < 0 || e > m.EpochSeq {
			return fmt.Errorf("%s: epoch %d outside 0..%d (meta.epochSeq)", where, e, m.EpochSeq)
		}
		return nil
	}
	for k, t := range a.Tombstones {
		if t == nil {
			return fmt.Errorf("tombstones[%q] is null", k)
		}
		if err := epoch("tombstones["+k+"]", t.Epoch); err != nil {
			return err
		}
	}
	for k, e := range a.DeletionEpochs {
		if err := epoch("deletionEpochs["+k+"]", e); err != nil {
			return err
		}
	}
	return nil
}

func (st JobState) known() bool {
	switch st {
	case JobRunning, JobCompleted, JobError, JobCancelled, JobStopped, JobReconciled:
		return true
	}
	return false
}

// terminal reports whether st is an outcome a reconciled job can keep.
func (st JobState) terminal() bool {
	switch st {
	case JobCompleted, JobError, JobCancelled, JobStopped:
		return true
	}
	return false
}
