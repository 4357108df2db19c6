package match

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

const testAbs = "/abs/f.txt"

// splitText splits file text into lines the way the reader does for LF
// text: a final newline does not start another line; empty text has none.
func splitText(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// body builds chunk lines from "<op><text>" strings.
func body(ls ...string) []patch.ChunkLine {
	out := make([]patch.ChunkLine, len(ls))
	for i, l := range ls {
		if l == "" {
			panic("body line without op")
		}
		out[i] = patch.ChunkLine{Op: patch.Op(l[0]), Text: l[1:], Line: i + 2}
	}
	return out
}

// chunk builds a chunk with the given @@ contexts (nil for none).
func chunk(ctxs []string, eof bool, ls ...string) *patch.Chunk {
	c := &patch.Chunk{Lines: body(ls...), EOF: eof, Line: 1}
	for i, t := range ctxs {
		c.Contexts = append(c.Contexts, patch.Context{Text: t, Line: 100 + i})
	}
	return c
}

func ctx(s ...string) []string { return s }

// placeAll places the chunks in order against one view, chaining cursors.
func placeAll(v *FileView, cursor int, chunks []*patch.Chunk) ([]*Placement, error) {
	var out []*Placement
	for _, c := range chunks {
		pl, err := v.Place(c, cursor, testAbs)
		if err != nil {
			return out, err
		}
		out = append(out, pl)
		cursor = pl.Cursor
	}
	return out, nil
}

// applyPlacements computes the new lines: each placement replaces file
// lines [Start, End) by its context and add lines.
func applyPlacements(lines []string, pls []*Placement) []string {
	sorted := append([]*Placement(nil), pls...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start < sorted[j].Start })
	var out []string
	at := 0
	for _, pl := range sorted {
		out = append(out, lines[at:pl.Start]...)
		for _, l := range pl.Lines {
			if l.Op != patch.OpDelete {
				out = append(out, l.Text)
			}
		}
		at = pl.End
	}
	return append(out, lines[at:]...)
}

// checkConsistent verifies the placement invariants the engine relies on.
func checkConsistent(t testing.TB, lines []string, pl *Placement) {
	t.Helper()
	if pl.Start < 0 || pl.Start > pl.End || pl.End > len(lines) {
		t.Fatalf("bad span [%d,%d) of %d lines", pl.Start, pl.End, len(lines))
	}
	next := pl.Start
	for _, l := range pl.Lines {
		switch l.Op {
		case patch.OpAdd:
			if l.FileLine != -1 {
				t.Fatalf("add line with FileLine %d", l.FileLine)
			}
		case patch.OpContext, patch.OpDelete:
			if l.FileLine != next {
				t.Fatalf("%c line refers to file line %d, want %d (lines %+v)", l.Op, l.FileLine, next, pl.Lines)
			}
			if l.Text != lines[l.FileLine] {
				t.Fatalf("%c line text %q differs from file line %q", l.Op, l.Text, lines[l.FileLine])
			}
			next++
		default:
			t.Fatalf("bad op %q", l.Op)
		}
	}
	if next != pl.End {
		t.Fatalf("placed old lines cover [%d,%d), span is [%d,%d)", pl.Start, next, pl.Start, pl.End)
	}
	if pl.Cursor < pl.Start || pl.Cursor > len(lines) {
		t.Fatalf("cursor %d outside [%d,%d]", pl.Cursor, pl.Start, len(lines))
	}
}

func asVerification(t testing.TB, err error) (*Error, *Error) {
	t.Helper()
	var me *Error
	if !errors.As(err, &me) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if !strings.HasPrefix(me.Message, VerificationPrefix) {
		t.Fatalf("message %q lacks the verification prefix", me.Message)
	}
	return me, me
}
