package store

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/slimgate/slim/tasks/internal/owner"
)

// The document codec. Every Update reads, decodes, encodes and writes the
// whole live document under the lock (and the archive when it needs it),
// and on a document of a thousand jobs encoding/json's decoding and
// encoding took nearly nine tenths of that hold, most of it in
// reflection. The two halves here (appendState in this file, decodeFast
// in decode.go) are written out field by field instead:
//
//   - appendState and appendArchive write exactly the bytes json.Marshal
//     writes for a State or an Archive: the same field order and names,
//     the same omitempty and omitzero rules, map keys sorted, strings
//     escaped the same way (HTML characters, U+2028 and U+2029 included,
//     invalid UTF-8 as U+FFFD). The on-disk format does not change, and a
//     document written by either encoder reads back the same.
//   - decodeFast and decodeArchiveFast read the files they write (and any
//     JSON of the same shape) and give up at anything else: an unknown or
//     repeated key, a null other than for a map or a list (a null job,
//     say, which the schema refuses anyway), a number that is not a
//     plain integer. A string with escapes or bytes that are not UTF-8 is
//     decoded by encoding/json itself. When it gives up, decode uses
//     encoding/json, so what a document means and which documents are
//     refused is still decided by encoding/json; decodeFast only ever
//     accepts a document that encoding/json decodes to the same State.
//
// A field added to the schema must be added here too; the tests compare
// both halves with encoding/json on a state whose every field is set.

// appendState appends the JSON encoding of st to b.
func appendState(b []byte, st *State) ([]byte, error) {
	e := encoder{b: b}
	e.open()
	e.name("meta")
	e.meta(&st.Meta)
	encodeMap(&e, "jobs", st.Live, (*encoder).job)
	encodeMap(&e, "aliasCounters", st.AliasCounters, (*encoder).int)
	encodeMap(&e, "orchestrators", st.Orchestrators, (*encoder).orchestrator)
	encodeMap(&e, "leases", st.Leases, (*encoder).lease)
	encodeMap(&e, "ops", st.Ops, (*encoder).op)
	encodeMap(&e, "waits", st.Waits, (*encoder).wait)
	encodeMap(&e, "wake", st.Wake, (*encoder).wake)
	encodeMap(&e, "injections", st.Injections, (*encoder).injections)
	e.close()
	return e.b, e.err
}

// appendArchive appends the JSON encoding of a to b.
func appendArchive(b []byte, a *Archive) ([]byte, error) {
	e := encoder{b: b}
	e.open()
	e.intField("version", int64(a.Version), false)
	encodeMap(&e, "jobs", a.Jobs, (*encoder).job)
	encodeMap(&e, "tombstones", a.Tombstones, (*encoder).tombstone)
	encodeMap(&e, "deletionEpochs", a.DeletionEpochs, (*encoder).int)
	e.close()
	return e.b, e.err
}

// encoder appends JSON to b. The first error (a time outside what RFC
// 3339 can write) is kept in err and the output is then useless.
type encoder struct {
	b   []byte
	err error
	// Where the encoder is, for errors: the map field of State and the
	// key in it (both empty in meta).
	field, key string
}

func (e *encoder) open()  { e.b = append(e.b, '{') }
func (e *encoder) close() { e.b = append(e.b, '}') }

// name writes the key of a field. Field names need no escaping. A comma
// goes first unless the object has just been opened (no value ends in
// '{').
func (e *encoder) name(name string) {
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, name...)
	e.b = append(e.b, '"', ':')
}

func (e *encoder) strField(name, v string, omitEmpty bool) {
	if omitEmpty && v == "" {
		return
	}
	e.name(name)
	e.b = appendString(e.b, v)
}

func (e *encoder) intField(name string, v int64, omitEmpty bool) {
	if omitEmpty && v == 0 {
		return
	}
	e.name(name)
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *encoder) boolField(name string, v, omitEmpty bool) {
	if omitEmpty && !v {
		return
	}
	e.name(name)
	e.b = strconv.AppendBool(e.b, v)
}

// timeField writes a time as time.Time.MarshalJSON does; omitZero leaves
// out a time whose IsZero is true, as the omitzero option does.
func (e *encoder) timeField(name string, t time.Time, omitZero bool) {
	if omitZero && t.IsZero() {
		return
	}
	e.name(name)
	e.b = append(e.b, '"')
	b, err := t.AppendText(e.b)
	if err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("%s.%s: %w", e.where(), name, err)
		}
		return
	}
	e.b = append(b, '"')
}

func (e *encoder) where() string {
	if e.field == "" {
		return "meta"
	}
	return fmt.Sprintf("%s[%q]", e.field, e.key)
}

// encodeMap writes the field name holding m, with m's keys in sorted
// order and null for a nil map, as encoding/json does.
func encodeMap[V any](e *encoder, name string, m map[string]V, val func(*encoder, V)) {
	e.name(name)
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.open()
	e.field = name
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if e.b[len(e.b)-1] != '{' {
			e.b = append(e.b, ',')
		}
		e.b = appendString(e.b, k)
		e.b = append(e.b, ':')
		e.key = k
		val(e, m[k])
	}
	e.close()
}

func (e *encoder) int(v int64) { e.b = strconv.AppendInt(e.b, v, 10) }

// null writes null for a nil pointer and reports whether it did.
func null[T any](e *encoder, p *T) bool {
	if p == nil {
		e.b = append(e.b, "null"...)
		return true
	}
	return false
}

func (e *encoder) meta(m *Meta) {
	e.open()
	e.intField("version", int64(m.Version), false)
	e.intField("generationSeq", m.GenerationSeq, false)
	e.intField("leaseSeq", m.LeaseSeq, false)
	e.intField("epochSeq", m.EpochSeq, false)
	e.timeField("createdAt", m.CreatedAt, true)
	// omitzero on a struct without an IsZero method: every field zero.
	if !m.Archive.IsZero() {
		e.name("archive")
		e.open()
		e.intField("seq", m.Archive.Seq, false)
		e.name("jobs")
		if m.Archive.Jobs == nil {
			e.b = append(e.b, "null"...)
		} else {
			e.b = append(e.b, '[')
			for i, id := range m.Archive.Jobs {
				if i > 0 {
					e.b = append(e.b, ',')
				}
				e.b = appendString(e.b, id)
			}
			e.b = append(e.b, ']')
		}
		e.close()
	}
	e.close()
}

func (e *encoder) job(j *Job) {
	if null(e, j) {
		return
	}
	e.open()
	e.strField("taskID", j.TaskID, false)
	e.strField("parentSessionID", j.ParentSessionID, false)
	e.strField("agent", j.Agent, false)
	e.strField("description", j.Description, false)
	e.strField("objective", j.Objective, true)
	e.strField("alias", j.Alias, false)
	e.strField("state", string(j.State), false)
	e.strField("terminalState", string(j.TerminalState), true)
	e.intField("generation", j.Generation, false)
	e.intField("taskGeneration", j.TaskGeneration, true)
	e.intField("terminalRevision", j.TerminalRevision, true)
	e.intField("activityRevision", j.ActivityRevision, true)
	e.boolField("background", j.Background, true)
	e.boolField("terminalUnreconciled", j.TerminalUnreconciled, true)
	e.boolField("statusUncertain", j.StatusUncertain, true)
	e.timeField("statusUncertainSince", j.StatusUncertainSince, true)
	e.strField("lastStatusError", j.LastStatusError, true)
	e.boolField("cancellationRequested", j.CancellationRequested, true)
	e.boolField("timedOut", j.TimedOut, true)
	e.boolField("recoverableAfterLiveBusy", j.RecoverableAfterLiveBusy, true)
	e.timeField("deadlineExceededAt", j.DeadlineExceededAt, true)
	e.timeField("launchedAt", j.LaunchedAt, true)
	e.timeField("lastLaunchedAt", j.LastLaunchedAt, true)
	e.timeField("runStartedAt", j.RunStartedAt, true)
	e.timeField("updatedAt", j.UpdatedAt, true)
	e.timeField("completedAt", j.CompletedAt, true)
	e.timeField("lastUsedAt", j.LastUsedAt, true)
	e.timeField("lastLiveBusyAt", j.LastLiveBusyAt, true)
	e.timeField("lastObservedAt", j.LastObservedAt, true)
	e.timeField("stopConfirmationStartedAt", j.StopConfirmationStartedAt, true)
	e.timeField("lastErrorAt", j.LastErrorAt, true)
	e.strField("resultSummary", j.ResultSummary, true)
	if len(j.ContextFiles) > 0 {
		e.name("contextFiles")
		e.b = append(e.b, '[')
		for i := range j.ContextFiles {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			f := &j.ContextFiles[i]
			e.open()
			e.strField("path", f.Path, false)
			e.intField("lineCount", int64(f.LineCount), false)
			e.timeField("lastReadAt", f.LastReadAt, true)
			e.close()
		}
		e.b = append(e.b, ']')
	}
	e.intField("totalErrors", int64(j.TotalErrors), true)
	e.intField("timeoutCount", int64(j.TimeoutCount), true)
	e.boolField("provisional", j.Provisional, true)
	e.boolField("externalOrigin", j.ExternalOrigin, true)
	e.boolField("pluginLaunched", j.PluginLaunched, true)
	e.boolField("verifiedRetainedRound", j.VerifiedRetainedRound, true)
	e.boolField("recoveredWithoutPrompt", j.RecoveredWithoutPrompt, true)
	e.strField("baselineMessageID", j.BaselineMessageID, true)
	// omitzero on a struct without an IsZero method: every field zero.
	if n := j.Notification; n != (Notification{}) {
		e.name("notification")
		e.open()
		e.boolField("owed", n.Owed, true)
		e.intField("attempts", int64(n.Attempts), false)
		e.boolField("sent", n.Sent, false)
		e.timeField("lastAttemptAt", n.LastAttemptAt, true)
		e.strField("lastError", n.LastError, true)
		e.close()
	}
	e.close()
}

func (e *encoder) orchestrator(o *Orchestrator) {
	if null(e, o) {
		return
	}
	e.open()
	e.timeField("firstSeenAt", o.FirstSeenAt, false)
	e.strField("agent", o.Agent, true)
	e.close()
}

func (e *encoder) owner(id *owner.Identity) {
	e.open()
	e.intField("pid", int64(id.PID), false)
	e.name("startTime")
	e.b = strconv.AppendUint(e.b, id.StartTime, 10)
	e.strField("bootID", id.BootID, false)
	e.strField("host", id.Host, false)
	e.close()
}

func (e *encoder) lease(l *Lease) {
	if null(e, l) {
		return
	}
	e.open()
	e.strField("taskID", l.TaskID, false)
	e.strField("kind", string(l.Kind), false)
	e.strField("token", l.Token, false)
	e.intField("seq", l.Seq, false)
	e.intField("generation", l.Generation, false)
	if l.TerminalRevision != nil {
		e.intField("terminalRevision", *l.TerminalRevision, false)
	}
	e.timeField("acquiredAt", l.AcquiredAt, false)
	e.strField("opID", l.OpID, true)
	e.name("owner")
	e.owner(&l.Owner)
	e.strField("state", string(l.State), false)
	e.strField("note", l.Note, true)
	e.close()
}

func (e *encoder) op(o *Op) {
	if null(e, o) {
		return
	}
	e.open()
	e.strField("id", o.ID, false)
	e.strField("kind", string(o.Kind), false)
	e.strField("taskID", o.TaskID, false)
	e.intField("generation", o.Generation, false)
	e.strField("leaseToken", o.LeaseToken, true)
	e.strField("phase", string(o.Phase), false)
	e.strField("clientMessageID", o.ClientMessageID, true)
	e.name("owner")
	e.owner(&o.Owner)
	e.timeField("createdAt", o.CreatedAt, false)
	e.timeField("localDeadlineAt", o.LocalDeadlineAt, true)
	e.timeField("sentAt", o.SentAt, true)
	e.timeField("settledAt", o.SettledAt, true)
	e.strField("outcome", string(o.Outcome), true)
	e.strField("error", o.Error, true)
	e.boolField("callerAnswered", o.CallerAnswered, true)
	e.close()
}

func (e *encoder) tombstone(t *Tombstone) {
	if null(e, t) {
		return
	}
	e.open()
	e.intField("epoch", t.Epoch, false)
	e.timeField("at", t.At, false)
	e.strField("reason", t.Reason, false)
	if lt := t.LastTerminal; lt != nil {
		e.name("lastTerminal")
		e.open()
		e.strField("state", string(lt.State), false)
		e.strField("summary", lt.Summary, false)
		e.close()
	}
	e.close()
}

func (e *encoder) wait(w *Wait) {
	if null(e, w) {
		return
	}
	e.open()
	e.strField("status", string(w.Status), false)
	e.timeField("armedAt", w.ArmedAt, true)
	e.strField("reason", w.Reason, true)
	e.strField("baselineUserMessageID", w.BaselineUserMessageID, true)
	e.strField("lastRearmIdentity", w.LastRearmIdentity, true)
	e.close()
}

func (e *encoder) wake(w *Wake) {
	if null(e, w) {
		return
	}
	e.open()
	e.intField("unchangedWakeCount", int64(w.UnchangedWakeCount), false)
	e.strField("lastFingerprint", w.LastFingerprint, true)
	e.boolField("stopped", w.Stopped, false)
	e.boolField("expectingWakeBusy", w.ExpectingWakeBusy, false)
	e.timeField("lastWakeAt", w.LastWakeAt, true)
	e.close()
}

// injections writes a list, null when it is nil (as encoding/json does
// for a nil slice that is a map value).
func (e *encoder) injections(list []Injection) {
	if list == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i := range list {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		in := &list[i]
		e.open()
		e.strField("taskID", in.TaskID, false)
		e.intField("generation", in.Generation, false)
		e.intField("terminalRevision", in.TerminalRevision, true)
		e.strField("promptShapeKey", in.PromptShapeKey, false)
		e.close()
	}
	e.b = append(e.b, ']')
}

const hexDigits = "0123456789abcdef"

// htmlSafe holds the bytes appendString copies as they are: ASCII from
// the space up, but for '"', '\\', '<', '>' and '&'. plain holds the
// bytes a string's contents are read as they are: ASCII from the space
// up, but for '"' and '\\'.
var htmlSafe, plainByte = func() (h, p [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return h, p
}()

// appendString appends s as a JSON string escaped the way json.Marshal
// escapes it: '"', '\\' and control characters, '<', '>' and '&' as
// \u escapes, invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if htmlSafe[c] {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
