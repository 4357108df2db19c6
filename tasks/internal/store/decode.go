package store

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// decodeFast decodes a document of the form appendState writes. It
// reports false, and its State is then unusable, for any input it does
// not read exactly as encoding/json would (see the comment at the top of
// codec.go); decode then falls back to encoding/json. It checks nothing
// of the schema: decode does that for both paths.
//
// The strings of the State are slices of data, which must not be written
// afterwards. The store's documents never are (they are read, decoded and
// only compared), so decoding copies no string: in a process that has
// just started, every byte it allocates is memory the kernel must first
// hand over, which costs about as much as the decoding itself.
//
// It also reads the two maps only a version 1 document has, into old.
func decodeFast(data []byte) (st *State, old legacy, ok bool) {
	d := decoder{data: data, s: unsafe.String(unsafe.SliceData(data), len(data))}
	st = new(State)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "meta":
			d.once(&seen, 0)
			d.meta(&st.Meta)
		case "jobs":
			d.once(&seen, 1)
			st.Live = decodeMap(&d, (*decoder).job)
		case "aliasCounters":
			d.once(&seen, 2)
			st.AliasCounters = decodeMap(&d, (*decoder).int64)
		case "orchestrators":
			d.once(&seen, 3)
			st.Orchestrators = decodeMap(&d, (*decoder).orchestrator)
		case "leases":
			d.once(&seen, 4)
			st.Leases = decodeMap(&d, (*decoder).lease)
		case "ops":
			d.once(&seen, 5)
			st.Ops = decodeMap(&d, (*decoder).op)
		case "tombstones":
			d.once(&seen, 6)
			old.Tombstones = decodeMap(&d, (*decoder).tombstone)
		case "deletionEpochs":
			d.once(&seen, 7)
			old.DeletionEpochs = decodeMap(&d, (*decoder).int64)
		case "waits":
			d.once(&seen, 8)
			st.Waits = decodeMap(&d, (*decoder).wait)
		case "wake":
			d.once(&seen, 9)
			st.Wake = decodeMap(&d, (*decoder).wake)
		case "injections":
			d.once(&seen, 10)
			st.Injections = decodeMap(&d, (*decoder).injections)
		default:
			d.fail()
		}
	})
	d.ws()
	if d.failed || d.i != len(d.data) {
		return nil, legacy{}, false
	}
	return st, old, true
}

// decodeArchiveFast is decodeFast for an archive file.
func decodeArchiveFast(data []byte) (*Archive, bool) {
	d := decoder{data: data, s: unsafe.String(unsafe.SliceData(data), len(data))}
	a := new(Archive)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "version":
			d.once(&seen, 0)
			a.Version = d.int()
		case "jobs":
			d.once(&seen, 1)
			a.Jobs = decodeMap(&d, (*decoder).job)
		case "tombstones":
			d.once(&seen, 2)
			a.Tombstones = decodeMap(&d, (*decoder).tombstone)
		case "deletionEpochs":
			d.once(&seen, 3)
			a.DeletionEpochs = decodeMap(&d, (*decoder).int64)
		default:
			d.fail()
		}
	})
	d.ws()
	if d.failed || d.i != len(d.data) {
		return nil, false
	}
	return a, true
}

// decoder reads JSON from data. s is data as a string (the same bytes),
// so that the strings it decodes are slices of it. Once failed is
// set, i is at the end of data and every read fails, so every loop ends.
type decoder struct {
	data   []byte
	s      string
	i      int
	failed bool
}

// fieldSet records which fields of one object were seen; no type has
// more than 64.
type fieldSet uint64

func (d *decoder) fail() {
	d.failed = true
	d.i = len(d.data)
}

// once fails on a field seen before in the same object: encoding/json
// merges or replaces repeated keys in ways not worth copying.
func (d *decoder) once(seen *fieldSet, bit uint) {
	if *seen&(1<<bit) != 0 {
		d.fail()
	}
	*seen |= 1 << bit
}

// ws skips JSON whitespace.
func (d *decoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (d *decoder) consume(c byte) bool {
	d.ws()
	if d.i < len(d.data) && d.data[d.i] == c {
		d.i++
		return true
	}
	return false
}

// object reads an object, calling f with each key and d at its value.
func (d *decoder) object(f func(key string)) {
	if !d.consume('{') {
		d.fail()
		return
	}
	if d.consume('}') {
		return
	}
	for !d.failed {
		k := d.str()
		if !d.consume(':') {
			d.fail()
			return
		}
		f(k)
		if d.consume(',') {
			continue
		}
		if !d.consume('}') {
			d.fail()
		}
		return
	}
}

// array reads an array, calling f with d at each element. It reports
// false for null, which leaves a slice nil.
func (d *decoder) array(f func()) bool {
	if d.null() {
		return false
	}
	if !d.consume('[') {
		d.fail()
		return false
	}
	if d.consume(']') {
		return true
	}
	for !d.failed {
		f()
		if d.consume(',') {
			continue
		}
		if !d.consume(']') {
			d.fail()
		}
		break
	}
	return true
}

// null consumes a null literal if one is next.
func (d *decoder) null() bool {
	d.ws()
	if len(d.data)-d.i >= 4 && d.s[d.i:d.i+4] == "null" {
		d.i += 4
		return true
	}
	return false
}

// decodeMap reads an object into a new map (empty, not nil, for {}; nil
// for null). A key that repeats fails.
func decodeMap[V any](d *decoder, val func(*decoder) V) map[string]V {
	if d.null() {
		return nil
	}
	m := map[string]V{}
	d.object(func(k string) {
		n := len(m)
		m[k] = val(d)
		if len(m) == n {
			d.fail()
		}
	})
	return m
}

// token scans a string and returns where its contents start and end and
// whether they are plain: no escape, only ASCII.
func (d *decoder) token() (start, end int, plain bool) {
	if !d.consume('"') {
		d.fail()
		return 0, 0, false
	}
	start, plain = d.i, true
	for i := start; i < len(d.data); i++ {
		if plainByte[d.data[i]] {
			continue
		}
		switch c := d.data[i]; {
		case c == '"':
			d.i = i + 1
			return start, i, plain
		case c < 0x20:
			d.fail()
			return 0, 0, false
		case c == '\\':
			// The escaped byte is checked by encoding/json (see str).
			plain = false
			i++
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	d.fail()
	return 0, 0, false
}

// str reads a string. One with escapes or bytes that are not UTF-8 is
// decoded by encoding/json, which decides what they mean.
func (d *decoder) str() string {
	start, end, plain := d.token()
	if d.failed {
		return ""
	}
	if plain || (!hasByte(d.data[start:end], '\\') && utf8.Valid(d.data[start:end])) {
		return d.s[start:end]
	}
	var s string
	if json.Unmarshal(d.data[start-1:end+1], &s) != nil {
		d.fail()
	}
	return s
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// time reads a time with time.Time.UnmarshalJSON, given the string
// exactly as it stands, quotes included, as encoding/json gives it.
func (d *decoder) time() time.Time {
	start, end, _ := d.token()
	var t time.Time
	if d.failed || t.UnmarshalJSON(d.data[start-1:end+1]) != nil {
		d.fail()
	}
	return t
}

func (d *decoder) bool() bool {
	d.ws()
	switch {
	case len(d.data)-d.i >= 4 && d.s[d.i:d.i+4] == "true":
		d.i += 4
		return true
	case len(d.data)-d.i >= 5 && d.s[d.i:d.i+5] == "false":
		d.i += 5
		return false
	}
	d.fail()
	return false
}

// digits reads a JSON number that is a plain integer (no fraction, no
// exponent: encoding/json refuses those for an integer field) and
// returns whether it is negative and its magnitude; it fails when the
// magnitude does not fit in a uint64.
func (d *decoder) digits() (neg bool, u uint64) {
	d.ws()
	i := d.i
	if i < len(d.data) && d.data[i] == '-' {
		neg = true
		i++
	}
	first := i
	for i < len(d.data) && d.data[i] >= '0' && d.data[i] <= '9' {
		c := uint64(d.data[i] - '0')
		if u > (1<<64-1-c)/10 {
			d.fail()
			return false, 0
		}
		u = u*10 + c
		i++
	}
	switch {
	case i == first, // no digit
		d.data[first] == '0' && i-first > 1, // a leading zero
		i < len(d.data) && (d.data[i] == '.' || d.data[i] == 'e' || d.data[i] == 'E'):
		d.fail()
		return false, 0
	}
	d.i = i
	return neg, u
}

// signed reads an integer that must fit in bits bits.
func (d *decoder) signed(bits uint) int64 {
	neg, u := d.digits()
	limit := uint64(1) << (bits - 1)
	switch {
	case d.failed:
		return 0
	case neg && u <= limit:
		return int64(-u) // -limit, the smallest value, included
	case !neg && u < limit:
		return int64(u)
	}
	d.fail()
	return 0
}

func (d *decoder) int64() int64 { return d.signed(64) }
func (d *decoder) int() int     { return int(d.signed(strconv.IntSize)) }

func (d *decoder) uint64() uint64 {
	neg, u := d.digits()
	if neg {
		d.fail()
	}
	return u
}

func (d *decoder) meta(m *Meta) {
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "version":
			d.once(&seen, 0)
			m.Version = d.int()
		case "generationSeq":
			d.once(&seen, 1)
			m.GenerationSeq = d.int64()
		case "leaseSeq":
			d.once(&seen, 2)
			m.LeaseSeq = d.int64()
		case "epochSeq":
			d.once(&seen, 3)
			m.EpochSeq = d.int64()
		case "createdAt":
			d.once(&seen, 4)
			m.CreatedAt = d.time()
		case "archive":
			d.once(&seen, 5)
			var as fieldSet
			d.object(func(k string) {
				switch k {
				case "seq":
					d.once(&as, 0)
					m.Archive.Seq = d.int64()
				case "jobs":
					d.once(&as, 1)
					ids := []string{}
					if d.array(func() { ids = append(ids, d.str()) }) {
						m.Archive.Jobs = ids
					}
				default:
					d.fail()
				}
			})
		default:
			d.fail()
		}
	})
}

func (d *decoder) job() *Job {
	j := new(Job)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "taskID":
			d.once(&seen, 0)
			j.TaskID = d.str()
		case "parentSessionID":
			d.once(&seen, 1)
			j.ParentSessionID = d.str()
		case "agent":
			d.once(&seen, 2)
			j.Agent = d.str()
		case "description":
			d.once(&seen, 3)
			j.Description = d.str()
		case "objective":
			d.once(&seen, 4)
			j.Objective = d.str()
		case "alias":
			d.once(&seen, 5)
			j.Alias = d.str()
		case "state":
			d.once(&seen, 6)
			j.State = JobState(d.str())
		case "terminalState":
			d.once(&seen, 7)
			j.TerminalState = JobState(d.str())
		case "generation":
			d.once(&seen, 8)
			j.Generation = d.int64()
		case "taskGeneration":
			d.once(&seen, 9)
			j.TaskGeneration = d.int64()
		case "terminalRevision":
			d.once(&seen, 10)
			j.TerminalRevision = d.int64()
		case "activityRevision":
			d.once(&seen, 11)
			j.ActivityRevision = d.int64()
		case "background":
			d.once(&seen, 12)
			j.Background = d.bool()
		case "terminalUnreconciled":
			d.once(&seen, 13)
			j.TerminalUnreconciled = d.bool()
		case "statusUncertain":
			d.once(&seen, 14)
			j.StatusUncertain = d.bool()
		case "statusUncertainSince":
			d.once(&seen, 15)
			j.StatusUncertainSince = d.time()
		case "lastStatusError":
			d.once(&seen, 16)
			j.LastStatusError = d.str()
		case "cancellationRequested":
			d.once(&seen, 17)
			j.CancellationRequested = d.bool()
		case "timedOut":
			d.once(&seen, 18)
			j.TimedOut = d.bool()
		case "recoverableAfterLiveBusy":
			d.once(&seen, 19)
			j.RecoverableAfterLiveBusy = d.bool()
		case "deadlineExceededAt":
			d.once(&seen, 20)
			j.DeadlineExceededAt = d.time()
		case "launchedAt":
			d.once(&seen, 21)
			j.LaunchedAt = d.time()
		case "lastLaunchedAt":
			d.once(&seen, 22)
			j.LastLaunchedAt = d.time()
		case "runStartedAt":
			d.once(&seen, 23)
			j.RunStartedAt = d.time()
		case "updatedAt":
			d.once(&seen, 24)
			j.UpdatedAt = d.time()
		case "completedAt":
			d.once(&seen, 25)
			j.CompletedAt = d.time()
		case "lastUsedAt":
			d.once(&seen, 26)
			j.LastUsedAt = d.time()
		case "lastLiveBusyAt":
			d.once(&seen, 27)
			j.LastLiveBusyAt = d.time()
		case "lastObservedAt":
			d.once(&seen, 41)
			j.LastObservedAt = d.time()
		case "stopConfirmationStartedAt":
			d.once(&seen, 28)
			j.StopConfirmationStartedAt = d.time()
		case "lastErrorAt":
			d.once(&seen, 29)
			j.LastErrorAt = d.time()
		case "resultSummary":
			d.once(&seen, 30)
			j.ResultSummary = d.str()
		case "contextFiles":
			d.once(&seen, 31)
			j.ContextFiles = d.contextFiles()
		case "totalErrors":
			d.once(&seen, 32)
			j.TotalErrors = d.int()
		case "timeoutCount":
			d.once(&seen, 33)
			j.TimeoutCount = d.int()
		case "provisional":
			d.once(&seen, 34)
			j.Provisional = d.bool()
		case "externalOrigin":
			d.once(&seen, 35)
			j.ExternalOrigin = d.bool()
		case "pluginLaunched":
			d.once(&seen, 36)
			j.PluginLaunched = d.bool()
		case "verifiedRetainedRound":
			d.once(&seen, 37)
			j.VerifiedRetainedRound = d.bool()
		case "recoveredWithoutPrompt":
			d.once(&seen, 38)
			j.RecoveredWithoutPrompt = d.bool()
		case "baselineMessageID":
			d.once(&seen, 39)
			j.BaselineMessageID = d.str()
		case "notification":
			d.once(&seen, 40)
			d.notification(&j.Notification)
		default:
			d.fail()
		}
	})
	return j
}

func (d *decoder) contextFiles() []ContextFile {
	list := []ContextFile{}
	if !d.array(func() {
		var f ContextFile
		var seen fieldSet
		d.object(func(k string) {
			switch k {
			case "path":
				d.once(&seen, 0)
				f.Path = d.str()
			case "lineCount":
				d.once(&seen, 1)
				f.LineCount = d.int()
			case "lastReadAt":
				d.once(&seen, 2)
				f.LastReadAt = d.time()
			default:
				d.fail()
			}
		})
		list = append(list, f)
	}) {
		return nil
	}
	return list
}

func (d *decoder) notification(n *Notification) {
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "attempts":
			d.once(&seen, 0)
			n.Attempts = d.int()
		case "sent":
			d.once(&seen, 1)
			n.Sent = d.bool()
		case "lastAttemptAt":
			d.once(&seen, 2)
			n.LastAttemptAt = d.time()
		case "owed":
			d.once(&seen, 3)
			n.Owed = d.bool()
		case "lastError":
			d.once(&seen, 4)
			n.LastError = d.str()
		default:
			d.fail()
		}
	})
}

func (d *decoder) orchestrator() *Orchestrator {
	o := new(Orchestrator)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "firstSeenAt":
			d.once(&seen, 0)
			o.FirstSeenAt = d.time()
		case "agent":
			d.once(&seen, 1)
			o.Agent = d.str()
		default:
			d.fail()
		}
	})
	return o
}

func (d *decoder) owner(id *owner.Identity) {
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "pid":
			d.once(&seen, 0)
			id.PID = d.int()
		case "startTime":
			d.once(&seen, 1)
			id.StartTime = d.uint64()
		case "bootID":
			d.once(&seen, 2)
			id.BootID = d.str()
		case "host":
			d.once(&seen, 3)
			id.Host = d.str()
		default:
			d.fail()
		}
	})
}

func (d *decoder) lease() *Lease {
	l := new(Lease)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "taskID":
			d.once(&seen, 0)
			l.TaskID = d.str()
		case "kind":
			d.once(&seen, 1)
			l.Kind = LeaseKind(d.str())
		case "token":
			d.once(&seen, 2)
			l.Token = d.str()
		case "seq":
			d.once(&seen, 3)
			l.Seq = d.int64()
		case "generation":
			d.once(&seen, 4)
			l.Generation = d.int64()
		case "terminalRevision":
			d.once(&seen, 5)
			r := d.int64()
			l.TerminalRevision = &r
		case "acquiredAt":
			d.once(&seen, 6)
			l.AcquiredAt = d.time()
		case "opID":
			d.once(&seen, 7)
			l.OpID = d.str()
		case "owner":
			d.once(&seen, 8)
			d.owner(&l.Owner)
		case "state":
			d.once(&seen, 9)
			l.State = LeaseState(d.str())
		case "note":
			d.once(&seen, 10)
			l.Note = d.str()
		default:
			d.fail()
		}
	})
	return l
}

func (d *decoder) op() *Op {
	o := new(Op)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "id":
			d.once(&seen, 0)
			o.ID = d.str()
		case "kind":
			d.once(&seen, 1)
			o.Kind = OpKind(d.str())
		case "taskID":
			d.once(&seen, 2)
			o.TaskID = d.str()
		case "generation":
			d.once(&seen, 3)
			o.Generation = d.int64()
		case "leaseToken":
			d.once(&seen, 4)
			o.LeaseToken = d.str()
		case "phase":
			d.once(&seen, 5)
			o.Phase = Phase(d.str())
		case "clientMessageID":
			d.once(&seen, 6)
			o.ClientMessageID = d.str()
		case "owner":
			d.once(&seen, 7)
			d.owner(&o.Owner)
		case "createdAt":
			d.once(&seen, 8)
			o.CreatedAt = d.time()
		case "localDeadlineAt":
			d.once(&seen, 9)
			o.LocalDeadlineAt = d.time()
		case "sentAt":
			d.once(&seen, 10)
			o.SentAt = d.time()
		case "settledAt":
			d.once(&seen, 11)
			o.SettledAt = d.time()
		case "outcome":
			d.once(&seen, 12)
			o.Outcome = Outcome(d.str())
		case "error":
			d.once(&seen, 13)
			o.Error = d.str()
		case "callerAnswered":
			d.once(&seen, 14)
			o.CallerAnswered = d.bool()
		default:
			d.fail()
		}
	})
	return o
}

func (d *decoder) tombstone() *Tombstone {
	t := new(Tombstone)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "epoch":
			d.once(&seen, 0)
			t.Epoch = d.int64()
		case "at":
			d.once(&seen, 1)
			t.At = d.time()
		case "reason":
			d.once(&seen, 2)
			t.Reason = d.str()
		case "lastTerminal":
			d.once(&seen, 3)
			lt := new(LastTerminal)
			var ls fieldSet
			d.object(func(k string) {
				switch k {
				case "state":
					d.once(&ls, 0)
					lt.State = JobState(d.str())
				case "summary":
					d.once(&ls, 1)
					lt.Summary = d.str()
				default:
					d.fail()
				}
			})
			t.LastTerminal = lt
		default:
			d.fail()
		}
	})
	return t
}

func (d *decoder) wait() *Wait {
	w := new(Wait)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "status":
			d.once(&seen, 0)
			w.Status = WaitStatus(d.str())
		case "armedAt":
			d.once(&seen, 1)
			w.ArmedAt = d.time()
		case "reason":
			d.once(&seen, 2)
			w.Reason = d.str()
		case "baselineUserMessageID":
			d.once(&seen, 3)
			w.BaselineUserMessageID = d.str()
		case "lastRearmIdentity":
			d.once(&seen, 4)
			w.LastRearmIdentity = d.str()
		default:
			d.fail()
		}
	})
	return w
}

func (d *decoder) wake() *Wake {
	w := new(Wake)
	var seen fieldSet
	d.object(func(k string) {
		switch k {
		case "unchangedWakeCount":
			d.once(&seen, 0)
			w.UnchangedWakeCount = d.int()
		case "lastFingerprint":
			d.once(&seen, 1)
			w.LastFingerprint = d.str()
		case "stopped":
			d.once(&seen, 2)
			w.Stopped = d.bool()
		case "expectingWakeBusy":
			d.once(&seen, 3)
			w.ExpectingWakeBusy = d.bool()
		case "lastWakeAt":
			d.once(&seen, 4)
			w.LastWakeAt = d.time()
		default:
			d.fail()
		}
	})
	return w
}

func (d *decoder) injections() []Injection {
	list := []Injection{}
	if !d.array(func() {
		var in Injection
		var seen fieldSet
		d.object(func(k string) {
			switch k {
			case "taskID":
				d.once(&seen, 0)
				in.TaskID = d.str()
			case "generation":
				d.once(&seen, 1)
				in.Generation = d.int64()
			case "terminalRevision":
				d.once(&seen, 2)
				in.TerminalRevision = d.int64()
			case "promptShapeKey":
				d.once(&seen, 3)
				in.PromptShapeKey = d.str()
			default:
				d.fail()
			}
		})
		list = append(list, in)
	}) {
		return nil
	}
	return list
}
