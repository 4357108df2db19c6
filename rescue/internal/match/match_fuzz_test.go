package match

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// FuzzPlace builds a chunk from a slice of random file lines, with random
// operations and drift, and checks that Place never panics and that every
// placement it returns is consistent: the span lies in the file, context and
// removed lines name consecutive file lines covering the span and carry
// their bytes, added lines are the authored ones in order, and each old line
// agrees with the file line it stands for under the step that placed it.
func FuzzPlace(f *testing.F) {
	f.Add("a\nb\nc\nd\ne", uint8(1), uint8(3), uint64(1), uint8(0))
	f.Add("x\ny\nx\n", uint8(0), uint8(1), uint64(2), uint8(2))
	f.Add("left\n  old\nright\nsep\nleft\n  old\nright", uint8(4), uint8(3), uint64(3), uint8(4))
	f.Add("top\nA\nB-stale\nC\nD\nE\nbottom", uint8(1), uint8(5), uint64(4), uint8(0))
	f.Add("const a = “x”;\nold\n\n", uint8(0), uint8(3), uint64(5), uint8(0x12))
	f.Add("", uint8(0), uint8(0), uint64(6), uint8(0))
	f.Add("\n\n", uint8('X'), uint8('F'), uint64(16), uint8(0x12)) // trailing empty context lines
	f.Fuzz(func(t *testing.T, text string, start, length uint8, seed uint64, flags uint8) {
		if len(text) > 1<<13 {
			return
		}
		var lines []string
		if text != "" {
			lines = strings.Split(text, "\n")
		}
		if len(lines) > 300 {
			lines = lines[:300]
		}
		n := len(lines)
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		s := int(start) % (n + 1)
		l := int(length) % 12
		if s+l > n {
			l = n - s
		}
		drift := func(x string) string {
			if r.IntN(3) != 0 {
				return x
			}
			switch r.IntN(7) {
			case 0:
				return x + "  "
			case 1:
				return strings.Replace(x, " ", "\u00A0", 1)
			case 2:
				return "  " + x
			case 3:
				return strings.Replace(x, `"`, "“", 1)
			case 4:
				if n > 0 {
					return lines[r.IntN(n)]
				}
				return x
			case 5:
				return x + "-stale"
			default:
				return strings.Replace(x, "-", "\u2212", 1)
			}
		}
		var ls []patch.ChunkLine
		for _, x := range lines[s : s+l] {
			x = drift(x)
			switch r.IntN(5) {
			case 0, 1:
				ls = append(ls, patch.ChunkLine{Op: patch.OpContext, Text: x})
			case 2:
				ls = append(ls, patch.ChunkLine{Op: patch.OpDelete, Text: x})
			case 3:
				ls = append(ls, patch.ChunkLine{Op: patch.OpDelete, Text: x}, patch.ChunkLine{Op: patch.OpAdd, Text: x + "'"})
			default:
				ls = append(ls, patch.ChunkLine{Op: patch.OpContext, Text: x}, patch.ChunkLine{Op: patch.OpAdd, Text: "new"})
			}
		}
		if r.IntN(4) == 0 {
			ls = append(ls, patch.ChunkLine{Op: patch.OpDelete, Text: ""}, patch.ChunkLine{Op: patch.OpAdd, Text: ""})
		}
		if len(ls) == 0 || r.IntN(5) == 0 {
			ls = append(ls, patch.ChunkLine{Op: patch.OpAdd, Text: "inserted"})
		}
		ch := &patch.Chunk{Lines: ls, EOF: flags&2 != 0}
		if flags&4 != 0 && n > 0 {
			ch.Contexts = append(ch.Contexts, patch.Context{Text: drift(lines[r.IntN(n)]), Line: 1})
			if flags&1 != 0 {
				ch.Contexts = append(ch.Contexts, patch.Context{Text: lines[r.IntN(n)], Line: 2})
			}
		}
		exactOnly := flags&8 != 0
		cursor := int(flags>>4) % (n + 1)
		v := NewFileView(lines, exactOnly)
		pl, err := v.Place(ch, cursor, "/f")
		if err != nil {
			asVerification(t, err)
			return
		}
		checkConsistent(t, lines, pl)
		if pl.Start < cursor {
			t.Fatalf("placed at %d before the cursor %d", pl.Start, cursor)
		}
		if len(pl.Contexts) != len(ch.Contexts) {
			t.Fatalf("contexts %v for %d @@ lines", pl.Contexts, len(ch.Contexts))
		}
		var adds, placedAdds, placedOld []string
		for _, x := range ch.Lines {
			if x.Op == patch.OpAdd {
				adds = append(adds, x.Text)
			}
		}
		for _, x := range pl.Lines {
			if x.Op == patch.OpAdd {
				placedAdds = append(placedAdds, x.Text)
			} else {
				placedOld = append(placedOld, x.Text)
			}
		}
		old := ch.OldLines()
		switch pl.Strategy {
		case StrategyExact, StrategyUnicode, StrategyTrimEnd, StrategyUnicodeTrimEnd, StrategyNFC:
			if exactOnly && pl.Strategy != StrategyExact {
				t.Fatalf("strategy %s above the size cap", pl.Strategy)
			}
			if !reflect.DeepEqual(placedAdds, adds) {
				t.Fatalf("adds %q, want %q", placedAdds, adds)
			}
			if len(placedOld) != len(old) {
				t.Fatalf("%d old lines placed, chunk has %d", len(placedOld), len(old))
			}
			r := rungExact
			for r < numRungs && rungNames[r] != pl.Strategy {
				r++
			}
			for k := range old {
				if rungKey(r, placedOld[k]) != rungKey(r, old[k]) {
					t.Fatalf("old line %q placed on %q under %s", old[k], placedOld[k], pl.Strategy)
				}
			}
		case StrategyTrailingEmpty:
			if len(placedOld) != len(old)-1 || old[len(old)-1] != "" {
				t.Fatalf("retry placed %d of %d old lines", len(placedOld), len(old))
			}
			for k := range placedOld {
				if ladderKey(placedOld[k]) != ladderKey(old[k]) {
					t.Fatalf("old line %q placed on %q", old[k], placedOld[k])
				}
			}
		case StrategyLCS:
			if !reflect.DeepEqual(placedAdds, adds) {
				t.Fatalf("adds %q, want %q", placedAdds, adds)
			}
			k := 0
			for _, x := range ch.Lines {
				if x.Op == patch.OpAdd {
					continue
				}
				if x.Op == patch.OpDelete && lineKey(x.Text) != lineKey(lines[pl.Start+k]) {
					t.Fatalf("LCS removes %q for %q", lines[pl.Start+k], x.Text)
				}
				k++
			}
		case StrategyPrefixSuffix:
			if !reflect.DeepEqual(placedAdds, adds) {
				t.Fatalf("adds %q, want %q", placedAdds, adds)
			}
			hasDel := false
			for _, x := range ch.Lines {
				hasDel = hasDel || x.Op == patch.OpDelete
			}
			if !hasDel {
				for _, x := range pl.Lines {
					if x.Op == patch.OpDelete {
						t.Fatalf("prefix/suffix removed %q for a chunk that removes nothing", x.Text)
					}
				}
			}
		case StrategyAlreadyApplied:
			// Nothing changes: every placed line is a context line with
			// the file's bytes, and together they are the chunk's new
			// lines on a seek rung.
			side, _ := newSide(ch.Lines)
			if len(pl.Lines) != len(side) {
				t.Fatalf("%d lines left as they are for %d new lines", len(pl.Lines), len(side))
			}
			for k, x := range pl.Lines {
				if x.Op != patch.OpContext || ladderKey(x.Text) != ladderKey(side[k].Text) {
					t.Fatalf("new line %q taken as made by %q (%c)", side[k].Text, x.Text, x.Op)
				}
			}
		case StrategyIndent:
			// Every old line agrees with its file line apart from leading
			// whitespace; every added line is the authored one, its
			// indentation perhaps mapped.
			if len(placedOld) != len(old) || len(placedAdds) != len(adds) {
				t.Fatalf("%d old and %d added lines placed for %d and %d", len(placedOld), len(placedAdds), len(old), len(adds))
			}
			for k := range old {
				if strings.TrimSpace(old[k]) == "" && strings.TrimSpace(placedOld[k]) != "" || !rungRest(old[k], placedOld[k]) {
					t.Fatalf("old line %q placed on %q", old[k], placedOld[k])
				}
			}
			for k := range adds {
				if strings.TrimLeft(adds[k], " \t") != strings.TrimLeft(placedAdds[k], " \t") {
					t.Fatalf("added line %q written as %q", adds[k], placedAdds[k])
				}
			}
		case StrategyEditedEdge:
			// Every old line but the first or the last matches its file
			// line on a seek rung, and that one is clearly the same line
			// edited.
			if !reflect.DeepEqual(placedAdds, adds) || len(placedOld) != len(old) {
				t.Fatalf("placed %d old lines and adds %q for %d and %q", len(placedOld), placedAdds, len(old), adds)
			}
			m := len(old)
			same := func(a, b int) bool {
				for k := a; k < b; k++ {
					if ladderKey(old[k]) != ladderKey(placedOld[k]) {
						return false
					}
				}
				return true
			}
			if !(same(1, m) && sameLine(old[0], placedOld[0]) || same(0, m-1) && sameLine(old[m-1], placedOld[m-1])) {
				t.Fatalf("edited-edge placement of %q on %q", old, placedOld)
			}
		case StrategyAnchor, StrategyEOFInsert:
			if len(old) != 0 || pl.Start != pl.End || !reflect.DeepEqual(placedAdds, adds) {
				t.Fatalf("insertion placement %+v", pl)
			}
		default:
			t.Fatalf("unknown strategy %q", pl.Strategy)
		}
	})
}
