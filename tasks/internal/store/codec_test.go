package store

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// awkward is every kind of string the encoder escapes or must leave
// alone: quotes, backslashes, control characters, the HTML characters,
// U+2028 and U+2029, invalid UTF-8, multi-byte and astral characters.
var awkward = []string{
	"", "plain", `say "hi"`, `C:\dir\file`, "tab\there\nline\r\x00\x01\x1f\x7f\b\f",
	"<b>&amp;</b>", "\u2028\u2029", "bad \xff\xfe byte", "truncated \xe2\x82", "café ✓ 😀",
	"\ufffd", `\u0041`, "mixed <\u2028> \xc3\x28 \"end\"",
}

// codecStates are states that exercise every rule of the codec: every
// field set, nothing set, nil and empty maps and slices, nil map values,
// awkward strings in keys and values, times in other zones and at the
// edges, the integer limits.
func codecStates() map[string]*State {
	out := map[string]*State{
		"every field": fullState(),
		"empty":       NewState(),
		"nil maps":    {Meta: Meta{Version: Version}},
	}
	st := fullState()
	st.Injections["none"], st.Injections["empty"] = nil, []Injection{}
	st.Live["ses_child"].ContextFiles = []ContextFile{}
	out["nil and empty lists"] = st

	st = fullState()
	for i, s := range awkward {
		j := *st.Live["ses_child"]
		j.TaskID, j.Description, j.ResultSummary, j.LastStatusError = s, s, s+s, s
		j.ContextFiles = []ContextFile{{Path: s}, {Path: s + "/x", LineCount: i}}
		st.Live[s] = &j
		st.AliasCounters[AliasKey(s, s)] = int64(i)
		st.arc.a.DeletionEpochs[s] = int64(i)
		st.arc.a.Tombstones[s] = &Tombstone{Reason: s, LastTerminal: &LastTerminal{Summary: s}}
		st.Waits[s] = &Wait{Status: WaitCleared, Reason: s, LastRearmIdentity: s}
	}
	out["awkward strings"] = st

	st = fullState()
	east := time.FixedZone("", 5*3600+30*60)
	west := time.FixedZone("WEST", -7*3600)
	j := st.Live["ses_child"]
	j.LaunchedAt = time.Date(2026, 12, 31, 23, 59, 59, 999999999, east)
	j.UpdatedAt = time.Date(1, 1, 1, 0, 0, 0, 1, west)
	j.CompletedAt = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	j.LastUsedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	// Zero times that are not the zero value: IsZero is true, but the
	// struct holding them is not all zeros.
	j.Notification = Notification{LastAttemptAt: time.Time{}.In(west)}
	st.Orchestrators["zero"] = &Orchestrator{}
	out["times"] = st

	st = fullState()
	j = st.Live["ses_child"]
	j.Generation, j.TaskGeneration, j.TotalErrors = math.MaxInt64, math.MinInt64, -1
	st.Meta.GenerationSeq = math.MaxInt64
	l := st.Leases["ses_child"]
	l.Owner.StartTime, l.Owner.PID = math.MaxUint64, math.MinInt
	min := int64(math.MinInt64)
	l.TerminalRevision = &min
	st.AliasCounters["zero"] = 0
	out["integer limits"] = st
	return out
}

// nilValues is a state with null entries in every map, which the schema
// refuses but the encoder must still write as json.Marshal does.
func nilValues() *State {
	st := fullState()
	st.Live["ses_nil"], st.Leases["ses_nil"], st.Ops["op_nil"] = nil, nil, nil
	st.Orchestrators["o_nil"], st.arc.a.Tombstones["t_nil"], st.Waits["w_nil"], st.Wake["k_nil"] = nil, nil, nil, nil
	st.arc.a.Jobs["ses_nil"] = nil
	return st
}

// codecArchives are the archives of codecStates: each state's jobs and
// its archive's tombstones and deletion epochs, in one archive.
func codecArchives() map[string]*Archive {
	out := map[string]*Archive{"nil maps": {Version: Version}}
	for name, st := range codecStates() {
		a := &Archive{Version: Version, Jobs: st.Live}
		if st.arc.a != nil {
			a.Tombstones, a.DeletionEpochs = st.arc.a.Tombstones, st.arc.a.DeletionEpochs
			for k, j := range st.arc.a.Jobs {
				a.Jobs[k] = j
			}
		}
		out[name] = a
	}
	n := nilValues()
	out["nil map values"] = n.arc.a
	return out
}

func TestAppendArchiveWritesWhatJSONMarshalWrites(t *testing.T) {
	for name, a := range codecArchives() {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(a)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendArchive(nil, a)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("appendArchive differs from json.Marshal at byte %d:\n got %s\nwant %s", firstDiff(got, want), got, want)
			}
		})
	}
}

func TestDecodeArchiveFastReadsWhatEncodingJSONReads(t *testing.T) {
	for name, a := range codecArchives() {
		if name == "nil map values" {
			continue
		}
		compact, _ := json.Marshal(a)
		indented, _ := json.MarshalIndent(a, "", "\t")
		for form, data := range map[string][]byte{"compact": compact, "indented": append(indented, " \r\n"...)} {
			t.Run(name+"/"+form, func(t *testing.T) {
				got, ok := decodeArchiveFast(data)
				if !ok {
					t.Fatalf("decodeArchiveFast gave up on an archive json.Marshal wrote:\n%s", data)
				}
				want := new(Archive)
				if err := json.Unmarshal(data, want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("decodeArchiveFast and encoding/json disagree:\n got %#v\nwant %#v", got, want)
				}
			})
		}
	}
	for _, doc := range []string{`{"version":2,"extra":1}`, `{"version":2,"jobs":{"a":null}}`, `{"version":2,"jobs":{},"jobs":{}}`, `{"version":2} x`} {
		if _, ok := decodeArchiveFast([]byte(doc)); ok {
			t.Errorf("decodeArchiveFast read %s", doc)
		}
	}
}

func TestAppendStateWritesWhatJSONMarshalWrites(t *testing.T) {
	states := codecStates()
	states["nil map values"] = nilValues()
	for name, st := range states {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendState(nil, st)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("appendState differs from json.Marshal at byte %d:\n got %s\nwant %s", firstDiff(got, want), got, want)
			}
		})
	}
}

func TestAppendStateRefusesATimeJSONCannotWrite(t *testing.T) {
	st := fullState()
	st.Live["ses_child"].UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := json.Marshal(st); err == nil {
		t.Fatal("json.Marshal wrote the year 10000")
	}
	_, err := appendState(nil, st)
	if err == nil || !strings.Contains(err.Error(), `jobs["ses_child"].updatedAt`) {
		t.Fatalf("err = %v, want an error naming the field", err)
	}
}

// reference decodes data the way decode did before decodeFast existed.
func reference(t *testing.T, data []byte) *State {
	t.Helper()
	st, _, err := decodeJSON(data)
	if err != nil {
		t.Fatalf("encoding/json refuses the document: %v\n%s", err, data)
	}
	return st
}

func TestDecodeFastReadsWhatEncodingJSONReads(t *testing.T) {
	for name, st := range codecStates() {
		compact, _ := json.Marshal(st)
		indented, _ := json.MarshalIndent(st, "", "\t")
		for form, data := range map[string][]byte{"compact": compact, "indented": append(indented, " \r\n"...)} {
			t.Run(name+"/"+form, func(t *testing.T) {
				got, _, ok := decodeFast(data)
				if !ok {
					t.Fatalf("decodeFast gave up on a document json.Marshal wrote:\n%s", data)
				}
				if want := reference(t, data); !reflect.DeepEqual(got, want) {
					t.Fatalf("decodeFast and encoding/json disagree:\n got %#v\nwant %#v", got, want)
				}
			})
		}
	}
	for _, name := range []string{"state-v1.json", "state-v2.json", "state-v3.json", "state-v4.json"} {
		golden, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		got, old, ok := decodeFast(golden)
		if !ok {
			t.Fatalf("decodeFast gave up on %s", name)
		}
		ref, refOld, _ := decodeJSON(golden)
		if !reflect.DeepEqual(got, ref) || !reflect.DeepEqual(old, refOld) {
			t.Fatalf("decodeFast and encoding/json disagree on %s", name)
		}
	}
}

// TestDecodeFastLeavesToEncodingJSONWhatItDoesNotRead feeds documents
// that encoding/json reads in its own way (or refuses): decodeFast must
// give up on each, so decode answers exactly as encoding/json does.
func TestDecodeFastLeavesToEncodingJSONWhatItDoesNotRead(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":             `{"meta":{"version":1},"extra":1}`,
		"unknown job field":         `{"meta":{"version":1},"jobs":{"a":{"taskID":"a","bogus":true}}}`,
		"field in another case":     `{"meta":{"Version":1}}`,
		"repeated field":            `{"meta":{"version":1,"version":1}}`,
		"repeated top-level field":  `{"meta":{"version":1},"jobs":{},"jobs":{}}`,
		"repeated map key":          `{"meta":{"version":1},"aliasCounters":{"a":1,"a":2}}`,
		"null job":                  `{"meta":{"version":1},"jobs":{"a":null}}`,
		"null meta":                 `{"meta":null}`,
		"null string":               `{"meta":{"version":1},"waits":{"w":{"status":null}}}`,
		"null time":                 `{"meta":{"version":1,"createdAt":null}}`,
		"fraction":                  `{"meta":{"version":1.0}}`,
		"exponent":                  `{"meta":{"version":1e0}}`,
		"leading zero":              `{"meta":{"version":01}}`,
		"overflow":                  `{"meta":{"version":1,"generationSeq":9223372036854775808}}`,
		"negative uint":             `{"meta":{"version":1},"leases":{"a":{"owner":{"startTime":-1}}}}`,
		"uint overflow":             `{"meta":{"version":1},"leases":{"a":{"owner":{"startTime":18446744073709551616}}}}`,
		"string for a number":       `{"meta":{"version":"1"}}`,
		"number for a string":       `{"meta":{"version":1},"waits":{"w":{"status":1}}}`,
		"bad time":                  `{"meta":{"version":1,"createdAt":"yesterday"}}`,
		"escaped time":              `{"meta":{"version":1,"createdAt":"2026\u002d03-01T12:00:00Z"}}`,
		"data after":                `{"meta":{"version":1}} {}`,
		"not an object":             `[1]`,
		"empty":                     ``,
		"truncated":                 `{"meta":{"version":1}`,
		"control character":         "{\"meta\":{\"version\":1},\"waits\":{\"w\":{\"status\":\"a\x01\"}}}",
		"bad escape":                `{"meta":{"version":1},"waits":{"w":{"status":"\x"}}}`,
		"literal run-on":            `{"meta":{"version":1},"wake":{"w":{"stopped":truex}}}`,
		"number run-on":             `{"meta":{"version":12a}}`,
		"trailing comma":            `{"meta":{"version":1},}`,
		"array for an object":       `{"meta":{"version":1},"jobs":[]}`,
		"object for a list":         `{"meta":{"version":1},"injections":{"p":{}}}`,
		"unknown context file key":  `{"meta":{"version":1},"jobs":{"a":{"contextFiles":[{"path":"x","size":1}]}}}`,
		"repeated notification key": `{"meta":{"version":1},"jobs":{"a":{"notification":{"sent":true,"sent":false}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, ok := decodeFast([]byte(doc)); ok {
				t.Fatalf("decodeFast read %s", doc)
			}
		})
	}
}

// TestDecodeFastAgreesWithEncodingJSONOnWhatItReads covers the JSON that
// json.Marshal never writes but decodeFast still reads: escapes, which it
// hands to encoding/json, raw invalid UTF-8, the integer edges.
func TestDecodeFastAgreesWithEncodingJSONOnWhatItReads(t *testing.T) {
	for name, doc := range map[string]string{
		"escapes":        `{"meta":{"version":1},"waits":{"w\u0041":{"status":"cleared","reason":"\u003c\/\"\\\b\f\n\r\t\ud83d\ude00"}}}`,
		"lone surrogate": `{"meta":{"version":1},"waits":{"w":{"status":"cleared","reason":"\ud800 x"}}}`,
		"escaped key":    `{"meta":{"version":1},"jobs":{"a":{"task\u0049D":"a","state":"running"}}}`,
		"invalid UTF-8":  "{\"meta\":{\"version\":1},\"waits\":{\"w\xff\":{\"status\":\"cleared\",\"reason\":\"a\xc3\x28b\"}}}",
		"minus zero":     `{"meta":{"version":1,"epochSeq":-0}}`,
		"int64 edges":    `{"meta":{"version":1,"generationSeq":9223372036854775807,"leaseSeq":-9223372036854775808}}`,
		"uint64 edge":    `{"meta":{"version":1},"leases":{"a":{"owner":{"startTime":18446744073709551615}}}}`,
		"whitespace":     " \t\r\n{ \"meta\" : { \"version\" : 1 } , \"injections\" : { \"p\" : [ ] , \"q\" : null } }\n\n",
		"empty maps":     `{"meta":{"version":1},"jobs":{},"ops":{}}`,
		"null maps":      `{"meta":{"version":1},"jobs":null,"injections":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			got, _, ok := decodeFast([]byte(doc))
			if !ok {
				t.Fatalf("decodeFast gave up on %s", doc)
			}
			if want := reference(t, []byte(doc)); !reflect.DeepEqual(got, want) {
				t.Fatalf("decodeFast and encoding/json disagree:\n got %#v\nwant %#v", got, want)
			}
		})
	}
}

// FuzzCodecMatchesEncodingJSON: whatever decodeFast reads, encoding/json
// reads to the same State; whatever state encoding/json reads,
// appendState encodes to the bytes json.Marshal writes.
func FuzzCodecMatchesEncodingJSON(f *testing.F) {
	for _, name := range []string{"state-v1.json", "state-v2.json", "state-v3.json", "state-v4.json"} {
		golden, _ := os.ReadFile(filepath.Join("testdata", name))
		f.Add(golden)
	}
	for _, st := range codecStates() {
		data, _ := json.Marshal(st)
		f.Add(data)
	}
	nils, _ := json.Marshal(nilValues())
	f.Add(nils)
	f.Add([]byte(`{"meta":{"version":1},"waits":{"w\u0041":{"status":"cleared","reason":"\u003c\ud800"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, fastOld, ok := decodeFast(data)
		ref, refOld, err := decodeJSON(data)
		if ok {
			if err != nil {
				t.Fatalf("decodeFast read a document encoding/json refuses (%v)", err)
			}
			if !reflect.DeepEqual(fast, ref) || !reflect.DeepEqual(fastOld, refOld) {
				t.Fatalf("decodeFast and encoding/json disagree:\n got %#v\nwant %#v", fast, ref)
			}
		}
		if err != nil {
			return
		}
		want, werr := json.Marshal(ref)
		got, gerr := appendState(nil, ref)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("appendState differs from json.Marshal (%v, %v):\n got %s\nwant %s", gerr, werr, got, want)
		}
	})
}

// FuzzAppendStringMatchesJSON: every string, invalid UTF-8 included, is
// escaped as json.Marshal escapes it.
func FuzzAppendStringMatchesJSON(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, json.Marshal wrote %s", s, got, want)
		}
	})
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// The codec against encoding/json on the 1,000 jobs of the hold
// benchmark's scope in one document (about 640 KB), as a document of
// version 1 held them.
func benchDocument(b *testing.B) (*State, []byte) {
	s := benchStoreJobs(b, Options{}, holdJobs)
	var all *State
	if err := s.View(func(st *State) error {
		for _, j := range slices.Collect(st.Jobs()) {
			st.Live[j.TaskID] = j
		}
		all = plain(st)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	data, err := appendState(nil, all)
	if err != nil {
		b.Fatal(err)
	}
	st, _, err := decodeJSON(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	return st, data
}

func BenchmarkEncodeJSONMarshal(b *testing.B) {
	st, _ := benchDocument(b)
	for b.Loop() {
		if _, err := json.Marshal(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeAppendState(b *testing.B) {
	st, data := benchDocument(b)
	for b.Loop() {
		if _, err := appendState(make([]byte, 0, len(data)+len(data)/8+4096), st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	_, data := benchDocument(b)
	for b.Loop() {
		if _, _, err := decodeJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeFast(b *testing.B) {
	_, data := benchDocument(b)
	for b.Loop() {
		if _, _, ok := decodeFast(data); !ok {
			b.Fatal("gave up")
		}
	}
}
