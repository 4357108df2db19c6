package search

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// matchRecord builds a match record the way ripgrep prints it.
func matchRecord(path, text string, line int, asBytes bool) string {
	p, _ := json.Marshal(path)
	var lines string
	if asBytes {
		lines = `{"bytes":"` + base64.StdEncoding.EncodeToString([]byte(text)) + `"}`
	} else {
		t, _ := json.Marshal(text)
		lines = `{"text":` + string(t) + `}`
	}
	return fmt.Sprintf(`{"type":"match","data":{"path":{"text":%s},"lines":%s,"line_number":%d,"absolute_offset":0,"submatches":[{"match":{"text":"x"},"start":0,"end":1}]}}`, p, lines, line)
}

func TestRecordReaderSplitsRecordsAndCutsLongOnes(t *testing.T) {
	long := matchRecord("big.js", strings.Repeat("x", 3*maxRecord)+"needle\n", 7, false)
	in := `{"type":"begin","data":{"path":{"text":"a.go"}}}` + "\r\n\n" + long + "\n" + `{"type":"summary","data":{}}`
	rr := newRecordReader(strings.NewReader(in))
	var recs []rgRecord
	for {
		rec, err := rr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rgRecord{head: append([]byte(nil), rec.head...), cut: rec.cut, line: rec.line})
	}
	if len(recs) != 3 {
		t.Fatalf("got %d records, want 3 (the empty line skipped, the last one without a newline kept)", len(recs))
	}
	if string(recs[0].head) != `{"type":"begin","data":{"path":{"text":"a.go"}}}` || string(recs[2].head) != `{"type":"summary","data":{}}` {
		t.Fatalf("records %q and %q, want them without their line ends", recs[0].head, recs[2].head)
	}
	if recs[0].cut || recs[2].cut || !recs[1].cut {
		t.Fatalf("cut flags = %v %v %v, want only the long record cut", recs[0].cut, recs[1].cut, recs[2].cut)
	}
	if len(recs[1].head) != maxRecord {
		t.Fatalf("cut record kept %d bytes, want %d", len(recs[1].head), maxRecord)
	}
	ev, err := parseRecord(recs[1])
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != "match" || ev.Path != "big.js" || ev.Line != 7 {
		t.Fatalf("cut record parsed as %+v", ev)
	}
	if want := strings.Repeat("x", maxPreview) + "..."; ev.Text != want {
		t.Fatalf("cut record preview has %d characters, want the first %d and ...", len(ev.Text), maxPreview)
	}
}

func TestParseRecordTable(t *testing.T) {
	cases := []struct {
		name string
		rec  string
		want rgEvent
	}{
		{"a match keeps the text without its line end", matchRecord("src/a.go", "func main() {\n", 3, false), rgEvent{Type: "match", Path: "src/a.go", Line: 3, Text: "func main() {"}},
		{"a CRLF line end goes too", matchRecord("w.txt", "dos line\r\n", 1, false), rgEvent{Type: "match", Path: "w.txt", Line: 1, Text: "dos line"}},
		{"a lone carriage return at the end of the last line stays", matchRecord("w.txt", "tail\r", 2, false), rgEvent{Type: "match", Path: "w.txt", Line: 2, Text: "tail\r"}},
		{"non-UTF-8 lines come as base64 bytes and show U+FFFD", matchRecord("bad.txt", "a\xffb\n", 9, true), rgEvent{Type: "match", Path: "bad.txt", Line: 9, Text: "a\uFFFDb"}},
		{"a begin record names the file", `{"type":"begin","data":{"path":{"text":"./x y.py"}}}`, rgEvent{Type: "begin", Path: "./x y.py"}},
		{"a path in bytes form is decoded", `{"type":"begin","data":{"path":{"bytes":"` + base64.StdEncoding.EncodeToString([]byte("p\xfe.c")) + `"}}}`, rgEvent{Type: "begin", Path: "p\xfe.c"}},
		{"a long line is cut to 2,000 characters", matchRecord("m.js", strings.Repeat("é", 2500)+"\n", 1, false), rgEvent{Type: "match", Path: "m.js", Line: 1, Text: strings.Repeat("é", 2000) + "..."}},
		{"a line of exactly 2,000 characters is whole", matchRecord("m.js", strings.Repeat("a", 2000)+"\n", 1, false), rgEvent{Type: "match", Path: "m.js", Line: 1, Text: strings.Repeat("a", 2000)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseRecord(rgRecord{head: []byte(c.rec)})
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseRecordRefusesWhatIsNotARecord(t *testing.T) {
	for _, in := range []string{"", "{", "null", `{"data":{}}`, "not json", `["type","match"]`} {
		if _, err := parseRecord(rgRecord{head: []byte(in)}); err == nil {
			t.Errorf("parseRecord(%q) = nil error", in)
		}
		if _, err := parseRecord(rgRecord{head: []byte(in), cut: true}); err == nil {
			t.Errorf("parseRecord(cut %q) = nil error", in)
		}
	}
}

// chunkReader returns at most n bytes per Read, so that record boundaries
// and keys fall across reads.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// readCut reads rec through the record reader, n bytes per read.
func readCut(t *testing.T, rec string, n int) rgRecord {
	t.Helper()
	rr := newRecordReader(chunkReader{strings.NewReader(rec + "\n"), n})
	r, err := rr.next()
	if err != nil {
		t.Fatal(err)
	}
	return rgRecord{head: append([]byte(nil), r.head...), cut: r.cut, line: r.line}
}

// FuzzParseRecord feeds arbitrary bytes to the parser (it must never panic
// or report a match without a positive line number), and checks that a
// real match record cut anywhere after its path still gives the same path,
// line number and a prefix of the same preview.
func FuzzParseRecord(f *testing.F) {
	f.Add("src/main.go", "func main() {}\n", 12, false, 80)
	f.Add("a \"quoted\" \\ path", "tab\there \u2028 \U0001F600 end\r\n", 1, false, 60)
	f.Add("bin.dat", "\xff\xfe\x00raw", 3, true, 70)
	f.Add("x", strings.Repeat("long ", 1000), 99999, false, 200)
	f.Fuzz(func(t *testing.T, path, text string, line int, asBytes bool, cut int) {
		for _, raw := range []string{path, text} {
			for _, c := range []bool{false, true} {
				ev, err := parseRecord(rgRecord{head: []byte(raw), cut: c})
				if err == nil && ev.Type == "match" && c && ev.Line <= 0 {
					t.Fatalf("a match without a line number from %q", raw)
				}
			}
		}
		if line <= 0 || !utf8.ValidString(path) || (!asBytes && !utf8.ValidString(text)) {
			return
		}
		rec := matchRecord(path, text, line, asBytes)
		whole, err := parseRecord(rgRecord{head: []byte(rec)})
		if err != nil {
			t.Fatalf("whole record %q: %v", rec, err)
		}
		if whole.Path != path || whole.Line != line {
			t.Fatalf("whole record gave %q:%d, want %q:%d", whole.Path, whole.Line, path, line)
		}
		// The same record through encoding/json, the reference decoder.
		var ref struct {
			Data struct {
				Lines struct {
					Text  *string `json:"text"`
					Bytes []byte  `json:"bytes"`
				} `json:"lines"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(rec), &ref); err != nil {
			t.Fatal(err)
		}
		refText := string(ref.Data.Lines.Bytes)
		if ref.Data.Lines.Text != nil {
			refText = *ref.Data.Lines.Text
		}
		if want := preview(refText); whole.Text != want {
			t.Fatalf("preview %q, encoding/json gives %q", whole.Text, want)
		}
		// A record as long as the longest ever cut, with a long tail of
		// submatches after the line number, read one byte at a time.
		long := strings.Replace(rec, `"submatches":[`, `"submatches":[`+strings.Repeat(`{"match":{"text":"x"},"start":0,"end":1},`, 200), 1)
		if len(long) <= maxRecord {
			pad := strings.Repeat(" ", maxRecord-len(long)+(cut%4096+4096)%4096+1)
			long = strings.Replace(long, `,"line_number"`, pad+`,"line_number"`, 1)
		}
		part, err := parseRecord(readCut(t, long, 61+(cut%997+997)%997))
		if err != nil {
			t.Fatalf("cut record of %d bytes: %v", len(long), err)
		}
		if part.Path != path || part.Line != line {
			t.Fatalf("cut record gave %q:%d, want %q:%d", part.Path, part.Line, path, line)
		}
		p := strings.TrimSuffix(part.Text, "...")
		if !strings.HasPrefix(whole.Text, p) && !strings.HasPrefix(strings.ToValidUTF8(whole.Text, "\uFFFD"), p) {
			t.Fatalf("cut preview %q is not a prefix of %q", part.Text, whole.Text)
		}
	})
}

// collectGrep decodes only the matches that can still be shown and counts
// the others: on any stream it must keep and count exactly what a
// collector given every decoded match keeps and counts. The streams have
// files of equal and different ages, many matches each, lines in bytes
// form, lines longer than a record is kept, and arrive in small reads.
func TestCollectGrepKeepsWhatDecodingEveryMatchKeeps(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	const dir = "/p"
	for round := 0; round < 300; round++ {
		nFiles := 1 + rng.Intn(30)
		limit := 1 + rng.Intn(20)
		mtimes := map[string]int64{}
		var stream strings.Builder
		var want []Match
		for _, f := range rng.Perm(nFiles) {
			rel := fmt.Sprintf("d%d/f%02d.go", f%3, f)
			abs := dir + "/" + rel
			mtimes[abs] = int64(rng.Intn(4)) // ties on purpose
			fmt.Fprintf(&stream, `{"type":"begin","data":{"path":{"text":"./%s"}}}`+"\n", rel)
			line := 0
			for m := rng.Intn(15); m > 0; m-- {
				line += 1 + rng.Intn(5)
				text := fmt.Sprintf("line %d of %s é\n", line, rel)
				switch rng.Intn(60) {
				case 0:
					text = strings.Repeat("x", maxRecord+rng.Intn(100)) + "\n"
				case 1:
					text = "raw \xff bytes\n"
				}
				rec := matchRecord("./"+rel, text, line, rng.Intn(20) == 1 || !utf8.ValidString(text))
				stream.WriteString(rec + "\n")
				ev, err := parseRecord(rgRecord{head: []byte(rec), cut: len(rec) > maxRecord})
				if len(rec) > maxRecord {
					ev, err = parseRecord(readCut(t, rec, 4096))
				}
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, Match{Path: abs, Line: ev.Line, Text: ev.Text})
			}
			fmt.Fprintf(&stream, `{"type":"end","data":{"path":{"text":"./%s"},"binary_offset":null,"stats":{}}}`+"\n", rel)
		}
		stream.WriteString(`{"type":"summary","data":{"elapsed_total":{"secs":0,"nanos":1}}}` + "\n")
		stat := func(p string) int64 { return mtimes[p] }
		ref := newGrepCollector(limit, stat)
		for _, m := range want {
			ref.add(m)
		}
		wantShown, wantTotal := ref.result()

		c := newGrepCollector(limit, stat)
		if err := collectGrep(chunkReader{strings.NewReader(stream.String()), 1 + rng.Intn(3000)}, dir, c); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		got, total := c.result()
		if total != wantTotal || fmt.Sprint(got) != fmt.Sprint(wantShown) {
			t.Fatalf("round %d: got %d total, %v\nwant %d total, %v", round, total, got, wantTotal, wantShown)
		}
	}
}
