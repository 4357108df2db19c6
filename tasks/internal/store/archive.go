package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"
	"slices"
	"strconv"
	"time"
)

// The archive. A scope's settled jobs (finished, acknowledged, certain,
// unleased: see Settled) and its tombstones are most of what it keeps,
// and almost no call needs them: a status, a message, a cancel, the
// settler's checks and the observation pass all look at running or
// unacknowledged tasks. So they live in a file of their own, which a
// transaction reads only when it asks for something in it (Job, Jobs,
// Archive and the accessors below) and which is written only when it
// changed. A transaction that never asks reads and rewrites only the live
// document.
//
// Every version of the archive is a new file, archive-<seq>.json, and
// the live document names the one that goes with it (Meta.Archive). A
// transaction that changed the archive writes the new file first (a
// temporary, fsynced and renamed, then the directory fsynced, so the name
// is durable before anything refers to it), then the live document that
// names it, and removes the old file only after the directory's fsync
// that makes the new document durable. A process killed at any moment
// therefore leaves the old document with the old archive or the new one
// with the new archive: a job that moves between the two files is never
// lost and never seen twice. A file no document names (its writer was
// killed before the rename of the document) is removed by a later
// transaction.
//
// A reader also tolerates a job present in both files, which no writer
// of this version leaves but which costs nothing to survive: the live
// copy wins, and the next transaction that writes the archive drops the
// other.

// ArchivePrefix and ArchiveSuffix frame the name of an archive file:
// archive-<seq>.json.
const (
	ArchivePrefix = "archive-"
	ArchiveSuffix = ".json"
)

// maxSettledLive is how many settled jobs the live document may hold
// before a transaction moves them to the archive. A job settles in a
// transaction that has often not read the archive (an acknowledgement,
// a released lease); moving it at once would make that transaction read
// and rewrite the whole archive. Waiting until this many have settled
// makes one transaction in this many pay for it, and keeps the live
// document small: about 0.7 KB a job.
const maxSettledLive = 16

// archiveState is a transaction's view of the archive.
type archiveState struct {
	a    *Archive // nil until the transaction asks for it
	raw  []byte   // the bytes a was decoded from (nil: there was no file)
	load func() ([]byte, error)
	// err is the first failure to read the archive: fn then saw an empty
	// one, and the View or Update fails with err.
	err error
	// migrated: a was built from a version 1 document and must be
	// written whatever it holds.
	migrated bool
	took     time.Duration // reading and decoding it
}

func newArchive() *Archive {
	a := &Archive{Version: Version}
	a.fill()
	return a
}

func (a *Archive) fill() {
	if a.Jobs == nil {
		a.Jobs = map[string]*Job{}
	}
	if a.Tombstones == nil {
		a.Tombstones = map[string]*Tombstone{}
	}
	if a.DeletionEpochs == nil {
		a.DeletionEpochs = map[string]int64{}
	}
}

func (a *Archive) empty() bool {
	return len(a.Jobs) == 0 && len(a.Tombstones) == 0 && len(a.DeletionEpochs) == 0
}

// migrate turns a version 1 document, decoded into s with old holding
// its tombstones and deletion epochs, into this version: those form the
// archive, which must be written with the next document.
func (s *State) migrate(old legacy) {
	a := &Archive{Version: Version, Tombstones: old.Tombstones, DeletionEpochs: old.DeletionEpochs}
	a.fill()
	s.Meta.Version = Version
	s.arc = archiveState{a: a, migrated: true}
}

// Archive returns the archive, reading it the first time the transaction
// asks. Changes to it are written back with the transaction. A job put
// here that is not settled moves to Live when the transaction commits.
func (s *State) Archive() *Archive {
	if s.arc.a != nil {
		return s.arc.a
	}
	a := newArchive()
	if s.arc.load != nil && s.arc.err == nil {
		start := time.Now()
		raw, err := s.arc.load()
		if err == nil {
			var d *Archive
			if d, err = decodeArchive(s.archiveName(), raw, s.Meta); err == nil {
				a, s.arc.raw = d, raw
			}
		}
		s.arc.err = err
		s.arc.took = time.Since(start)
	}
	s.arc.a = a
	return a
}

// archiveName is the name of the archive file the document names.
func (s *State) archiveName() string { return archiveFile(s.Meta.Archive.Seq) }

func archiveFile(seq int64) string {
	return ArchivePrefix + strconv.FormatInt(seq, 10) + ArchiveSuffix
}

// hasArchive reports whether there is anything archived to look in: a
// file the document names, or an archive the transaction already has.
func (s *State) hasArchive() bool { return s.arc.a != nil || s.Meta.Archive.Seq != 0 }

// Settled reports whether j needs nothing more: finished and acknowledged
// (reconciled, or stopped and acknowledged), with a certain status and no
// lease on its task. Only a settled job is archived. Nothing observes a
// settled job; it is only looked up by name, listed on a board, revived,
// deleted or evicted.
func (s *State) Settled(j *Job) bool {
	return j != nil && !j.TerminalUnreconciled && !j.StatusUncertain && s.Leases[j.TaskID] == nil &&
		(j.State == JobReconciled || j.State == JobStopped)
}

// Job returns the job of task id: the live one, else the archived one,
// else nil. The archive is read only when the document lists id in it.
func (s *State) Job(id string) *Job {
	if j := s.Live[id]; j != nil {
		return j
	}
	if s.arc.a == nil && !s.Meta.Archive.has(id) {
		return nil
	}
	return s.Archive().Jobs[id]
}

// Jobs yields every job, the live ones first, then the archived ones no
// live copy supersedes; the archive is read only when the walk goes past
// the live jobs. Adding or deleting jobs during the walk is not allowed.
func (s *State) Jobs() iter.Seq[*Job] {
	return func(yield func(*Job) bool) {
		for _, j := range s.Live {
			if !yield(j) {
				return
			}
		}
		if !s.hasArchive() {
			return
		}
		for id, j := range s.Archive().Jobs {
			if s.Live[id] == nil && !yield(j) {
				return
			}
		}
	}
}

// DeleteJob deletes the job of task id, live and archived.
func (s *State) DeleteJob(id string) {
	delete(s.Live, id)
	if s.hasArchive() {
		delete(s.Archive().Jobs, id)
	}
}

// ArchivedJobs returns how many jobs the archive holds, without reading
// it when the transaction has not: every one of them is settled.
func (s *State) ArchivedJobs() int {
	if s.arc.a != nil {
		return len(s.arc.a.Jobs)
	}
	return len(s.Meta.Archive.Jobs)
}

// Tombstone returns the tombstone of task id, or nil. A task that has a
// job has no tombstone: a launch with its ID proved it live again.
func (s *State) Tombstone(id string) *Tombstone {
	if !s.hasArchive() || s.Job(id) != nil {
		return nil
	}
	return s.Archive().Tombstones[id]
}

// DeletionEpoch returns the epoch of task id's latest drop or deletion,
// 0 when it was never dropped.
func (s *State) DeletionEpoch(id string) int64 {
	if !s.hasArchive() {
		return 0
	}
	return s.Archive().DeletionEpochs[id]
}

// settle runs when a transaction commits: it decides what moves between
// the live document and the archive and returns the archive to write
// (nil when the archive file stays as it is). It reads the archive only
// when the transaction already did or too many settled jobs wait in the
// live document.
//
//   - An archived job that a live copy supersedes is dropped from the
//     archive; one that is no longer settled moves to Live.
//   - A tombstone of a task that has a job is dropped.
//   - The live document's settled jobs move to the archive when it is
//     written anyway or more than maxSettledLive of them wait.
func (s *State) settle() (data []byte, write bool, err error) {
	var settled []string
	for id, j := range s.Live {
		if s.Settled(j) {
			settled = append(settled, id)
		}
	}
	if s.arc.a == nil && len(settled) <= maxSettledLive {
		return nil, false, nil
	}
	a := s.Archive()
	if s.arc.err != nil {
		return nil, false, s.arc.err
	}
	for id, j := range a.Jobs {
		switch {
		case j == nil:
			// Left for check to refuse.
		case s.Live[id] != nil:
			delete(a.Jobs, id)
		case !s.Settled(j):
			s.Live[id] = j
			delete(a.Jobs, id)
		}
	}
	for id := range a.Tombstones {
		if s.Live[id] != nil || a.Jobs[id] != nil {
			delete(a.Tombstones, id)
		}
	}
	moved := false
	move := func() {
		for _, id := range settled {
			a.Jobs[id] = s.Live[id]
			delete(s.Live, id)
		}
		moved = true
	}
	if len(settled) > maxSettledLive {
		move()
	}
	for {
		if a.empty() {
			// No file is needed; an existing one is let go.
			return nil, s.Meta.Archive.Seq != 0, nil
		}
		data, err = appendArchive(make([]byte, 0, len(s.arc.raw)+len(s.arc.raw)/8+4096), a)
		if err != nil {
			return nil, false, err
		}
		data = append(data, '\n')
		changed := s.arc.migrated || s.Meta.Archive.Seq == 0 || !bytes.Equal(data, s.arc.raw)
		if changed && !moved && len(settled) > 0 {
			// Written anyway: the settled jobs ride along.
			move()
			continue
		}
		return data, changed, nil
	}
}

// decodeArchive parses an archive file and checks it against the
// document that names it: the same rules as the document (Corrupt,
// Unsupported), and as many jobs as the document counts.
func decodeArchive(name string, data []byte, m Meta) (*Archive, error) {
	a, ok := decodeArchiveFast(data)
	if !ok {
		a = new(Archive)
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		err := dec.Decode(a)
		if err == nil {
			if _, terr := dec.Token(); terr != io.EOF {
				err = errors.New("data after the archive")
			}
		}
		if err != nil {
			var probe struct {
				Version int `json:"version"`
			}
			if json.Unmarshal(data, &probe) == nil && probe.Version != 0 && !readable(probe.Version) {
				return nil, unsupported(name, probe.Version)
			}
			return nil, newErr(Corrupt, CodeCorrupt, err, "the archive %s does not decode; it was left as it is", name)
		}
	}
	switch {
	case a.Version == 0:
		return nil, newErr(Corrupt, CodeCorrupt, nil, "the archive %s has no schema version; it was left as it is", name)
	case a.Version == 2 || a.Version == 3:
		// As for the document: versions 3 and 4 only added job fields,
		// and the archive is written in this version when a transaction
		// next changes it.
		a.Version = Version
	case a.Version != Version:
		return nil, unsupported(name, a.Version)
	}
	a.fill()
	if err := a.check(m); err != nil {
		return nil, newErr(Corrupt, CodeCorrupt, err, "the archive %s breaks the schema; it was left as it is", name)
	}
	if !slices.Equal(sortedKeys(a.Jobs), m.Archive.Jobs) {
		return nil, newErr(Corrupt, CodeCorrupt, nil, "the archive %s holds %d jobs, not the %d the document lists; it was left as it is", name, len(a.Jobs), len(m.Archive.Jobs))
	}
	return a, nil
}

// readArchive reads an open archive file as readDocument reads the
// document (a regular file within the bound, into one buffer of its size).
func readArchive(f *os.File, name string, max int64) ([]byte, error) {
	data, err := readOpen(f, name, max)
	if err != nil {
		return nil, archiveReadErr(name, err)
	}
	return data, nil
}
