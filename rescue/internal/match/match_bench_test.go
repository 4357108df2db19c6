package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// synthSource returns n lines of deterministic Go-like source: functions of
// a few statements each, with string literals, so lines repeat the way real
// code does ("}", "", "\treturn err") while chunks stay unique.
func synthSource(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 42))
	out := make([]string, 0, n+8)
	for f := 0; len(out) < n; f++ {
		out = append(out, fmt.Sprintf("func handler%d(ctx context.Context, req *Request) error {", f))
		for s := 0; s < 3+r.IntN(6); s++ {
			switch r.IntN(5) {
			case 0:
				out = append(out, fmt.Sprintf("\tv%d := req.Field%d * %d", s, r.IntN(50), r.IntN(1000)))
			case 1:
				out = append(out, fmt.Sprintf("\tlog.Printf(\"handler %d: step %d\", v%d)", f, s, r.IntN(4)))
			case 2:
				out = append(out, "\tif err != nil {", "\t\treturn err", "\t}")
			case 3:
				out = append(out, fmt.Sprintf("\tresult = append(result, item%d)", r.IntN(200)))
			default:
				out = append(out, "")
			}
		}
		out = append(out, "\treturn nil", "}", "")
	}
	return out[:n]
}

// benchChunks builds k chunks spread evenly over lines (each around a
// function header, so each is unique): three context
// lines, one removed line, one added line, three context lines. With drift,
// the file is changed under each chunk: curly quotes on a context line
// (unicode rung), trailing spaces (trim-end rung), or an indented removed
// line (prefix/suffix rescue), in turn; and lines are inserted between the
// chunks so nothing sits where the patch was written.
func benchChunks(lines []string, k int, drift bool) ([]string, []*patch.Chunk) {
	n := len(lines)
	file := append([]string(nil), lines...)
	var chunks []*patch.Chunk
	type edit struct {
		at   int
		kind int
	}
	var edits []edit
	next := 0 // first header the next chunk may use
	count := map[string]int{}
	for _, l := range lines {
		count[strings.TrimSpace(l)]++
	}
	for i := 0; i < k; i++ {
		// Anchor each chunk on a function header so that it is unique. The
		// chunks rescued by prefix/suffix (every third) need a body of
		// their own, see distinctBody.
		q := max(next, (i*n)/k)
		for q < n && !(strings.HasPrefix(lines[q], "func handler") && (i%3 != 2 || distinctBody(lines, q, count))) {
			q++
		}
		next = q + 1
		p := max(0, q-2)
		if p+7 > n {
			p = n - 7
		}
		var ls []patch.ChunkLine
		for j := 0; j < 7; j++ {
			t := lines[p+j]
			switch {
			case j == 3:
				ls = append(ls, patch.ChunkLine{Op: patch.OpDelete, Text: t}, patch.ChunkLine{Op: patch.OpAdd, Text: t + " // changed"})
			default:
				ls = append(ls, patch.ChunkLine{Op: patch.OpContext, Text: t})
			}
		}
		chunks = append(chunks, &patch.Chunk{Lines: ls})
		edits = append(edits, edit{p, i % 3})
	}
	if !drift {
		return file, chunks
	}
	// Apply drift from the end so positions stay valid.
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		switch e.kind {
		case 0:
			l := strings.Replace(file[e.at+1], " ", "\u00A0", 1)
			l = strings.Replace(l, `"`, "“", 1)
			file[e.at+1] = strings.Replace(l, `"`, "”", 1)
			file[e.at] = file[e.at] + "  "
		case 1:
			file[e.at+5] = file[e.at+5] + " \t"
		case 2:
			file[e.at+3] = "  " + file[e.at+3]
		}
		// Insert two lines before each chunk: the code moved.
		ins := []string{fmt.Sprintf("// moved %d", i), ""}
		file = append(file[:e.at], append(ins, file[e.at:]...)...)
	}
	return file, chunks
}

// distinctBody reports whether the chunk around the function header at q
// (two lines before it, four after) has at least three lines that occur
// nowhere else in the file (count holds each trimmed line's occurrences).
// Then no other window of seven lines can share the five lines the LCS
// score needs, so no other function that starts with the same boilerplate
// is a look-alike place that makes the rescue ambiguous.
func distinctBody(lines []string, q int, count map[string]int) bool {
	unique := 0
	for _, l := range lines[max(0, q-2):min(len(lines), q+5)] {
		if count[strings.TrimSpace(l)] == 1 {
			unique++
		}
	}
	return unique >= 3
}

func BenchmarkPlace(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		src := synthSource(n, 7)
		for _, k := range []int{1, 10, 50} {
			for _, drift := range []bool{false, true} {
				file, chunks := benchChunks(src, k, drift)
				name := fmt.Sprintf("lines=%dk/chunks=%d/exact", n/1000, k)
				if drift {
					name = fmt.Sprintf("lines=%dk/chunks=%d/drifted", n/1000, k)
				}
				size := 0
				for _, l := range file {
					size += len(l) + 1
				}
				// Check once that every chunk places, outside the timer.
				v := NewFileView(file, false)
				cur := 0
				for i, c := range chunks {
					pl, err := v.Place(c, cur, "/bench")
					if err != nil {
						b.Fatalf("%s: chunk %d: %v", name, i, err)
					}
					cur = pl.Cursor
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					cpu0 := processCPU()
					for b.Loop() {
						v := NewFileView(file, false)
						cur := 0
						for _, c := range chunks {
							pl, err := v.Place(c, cur, "/bench")
							if err != nil {
								b.Fatal(err)
							}
							cur = pl.Cursor
						}
					}
					b.ReportMetric(float64(size), "fileB")
					if cpu := processCPU() - cpu0; cpu > 0 {
						b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
					}
				})
			}
		}
	}
}

// TestBenchChunksDrift makes sure the drifted benchmark exercises the rungs
// and the rescue it is meant to.
func TestBenchChunksDrift(t *testing.T) {
	file, chunks := benchChunks(synthSource(3000, 7), 9, true)
	v := NewFileView(file, false)
	cur := 0
	seen := map[string]int{}
	for i, c := range chunks {
		pl, err := v.Place(c, cur, "/bench")
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		checkConsistent(t, file, pl)
		seen[pl.Strategy]++
		cur = pl.Cursor
	}
	for _, s := range []string{"unicode-trim-end", "trim-end", "prefix-suffix"} {
		if seen[s] == 0 {
			t.Errorf("no chunk placed with %s: %v", s, seen)
		}
	}
}

// BenchmarkNewFileView indexes a 100k-line file, one of the stage
// benchmarks that locate where BenchmarkProcess (package rescue) spends its
// time.
func BenchmarkNewFileView(b *testing.B) {
	lines := make([]string, 100_000)
	for i := range lines {
		lines[i] = fmt.Sprintf("\tv%07d := call(\"alpha\", 'q', %d) // beta", i, i%1000)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewFileView(lines, false)
	}
}

// newStepChunks builds k chunks like benchChunks (each anchored on a
// function header whose body is its own), and drifts the file under every
// chunk so that the step named by kind places it: "reindented" (one more
// leading tab on every line of the chunk), "edited-edge" (a comment
// appended to the chunk's first line) or "already-applied" (the change
// made already).
func newStepChunks(lines []string, k int, kind string) ([]string, []*patch.Chunk) {
	n := len(lines)
	count := map[string]int{}
	for _, l := range lines {
		count[strings.TrimSpace(l)]++
	}
	file := append([]string(nil), lines...)
	var chunks []*patch.Chunk
	var at []int
	next := 0
	for i := 0; i < k; i++ {
		q := max(next, (i*n)/k)
		for q < n && !(strings.HasPrefix(lines[q], "func handler") && distinctBody(lines, q, count)) {
			q++
		}
		if q+5 > n {
			break
		}
		next = q + 8
		p := max(0, q-2)
		var ls []patch.ChunkLine
		for j := 0; j < 7; j++ {
			t := lines[p+j]
			if j == 3 {
				ls = append(ls, patch.ChunkLine{Op: patch.OpDelete, Text: t}, patch.ChunkLine{Op: patch.OpAdd, Text: t + " // changed"})
				continue
			}
			ls = append(ls, patch.ChunkLine{Op: patch.OpContext, Text: t})
		}
		chunks = append(chunks, &patch.Chunk{Lines: ls})
		at = append(at, p)
	}
	for _, p := range at {
		switch kind {
		case "reindented":
			for j := p; j < p+7; j++ {
				if file[j] != "" {
					file[j] = "\t" + file[j]
				}
			}
		case "edited-edge":
			file[p] += " // edited"
		case "already-applied":
			file[p+3] += " // changed"
		}
	}
	return file, chunks
}

// BenchmarkPlaceNewSteps times the already-applied, indentation and
// edited-edge steps, which run only for chunks the seek does not find as
// they are, on the same files as BenchmarkPlace.
func BenchmarkPlaceNewSteps(b *testing.B) {
	for _, kind := range []string{"reindented", "edited-edge", "already-applied"} {
		for _, n := range []int{1000, 10000, 100000} {
			file, chunks := newStepChunks(synthSource(n, 7), 50, kind)
			name := fmt.Sprintf("%s/lines=%dk/chunks=%d", kind, n/1000, len(chunks))
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					v := NewFileView(file, false)
					cur := 0
					for i, c := range chunks {
						pl, err := v.Place(c, cur, "/bench")
						if err != nil {
							b.Fatalf("chunk %d: %v", i, err)
						}
						cur = pl.Cursor
					}
				}
			})
		}
	}
}

// TestNewStepChunks makes sure BenchmarkPlaceNewSteps exercises the step
// it names for every chunk.
func TestNewStepChunks(t *testing.T) {
	want := map[string]string{"reindented": StrategyIndent, "edited-edge": StrategyEditedEdge, "already-applied": StrategyAlreadyApplied}
	for kind, strategy := range want {
		file, chunks := newStepChunks(synthSource(5000, 7), 20, kind)
		v := NewFileView(file, false)
		cur := 0
		for i, c := range chunks {
			pl, err := v.Place(c, cur, "/bench")
			if err != nil {
				t.Fatalf("%s: chunk %d: %v", kind, i, err)
			}
			if pl.Strategy != strategy {
				t.Errorf("%s: chunk %d placed by %s, want %s", kind, i, pl.Strategy, strategy)
			}
			cur = pl.Cursor
		}
	}
}
