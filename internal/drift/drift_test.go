package drift

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSplitJoin(t *testing.T) {
	tests := []struct {
		in   string
		want []Line
	}{
		{"", nil},
		{"a", []Line{{"a", ""}}},
		{"a\n", []Line{{"a", "\n"}}},
		{"a\r\nb\rc\n\nd", []Line{{"a", "\r\n"}, {"b", "\r"}, {"c", "\n"}, {"", "\n"}, {"d", ""}}},
		{"\r\r\n", []Line{{"", "\r"}, {"", "\r\n"}}},
	}
	for _, tt := range tests {
		got := Split([]byte(tt.in))
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if back := string(Join(got)); back != tt.in {
			t.Errorf("Join(Split(%q)) = %q", tt.in, back)
		}
	}
}

func TestDominantEOL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "\n"},
		{"abc", "\n"},
		{"a\r\nb\r\nc\n", "\r\n"},
		{"a\nb\r\n", "\n"},   // tie: first met
		{"a\r\nb\n", "\r\n"}, // tie: first met
		{"a\rb\rc\r\nd\n", "\r"},
	}
	for _, tt := range tests {
		if got := DominantEOL(Split([]byte(tt.in))); got != tt.want {
			t.Errorf("DominantEOL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	tests := []struct {
		name       string
		disk       string
		start, del int
		add        []string
		want       string
	}{
		{"replace middle", "a\nb\nc\n", 1, 1, []string{"B"}, "a\nB\nc\n"},
		{"crlf file", "a\r\nb\r\nc\r\n", 1, 1, []string{"B", "B2"}, "a\r\nB\r\nB2\r\nc\r\n"},
		{"mixed keeps untouched terminators", "a\r\nb\nc\r\n", 2, 0, []string{"x"}, "a\r\nb\nx\r\nc\r\n"},
		{"insert at end, no final newline", "a\nb", 2, 0, []string{"c"}, "a\nb\nc"},
		{"replace last, no final newline", "a\nb", 1, 1, []string{"B"}, "a\nB"},
		{"delete last, no final newline", "a\nb\nc", 2, 1, nil, "a\nb"},
		{"delete last, final newline", "a\nb\n", 1, 1, nil, "a\n"},
		{"delete all", "a\nb\n", 0, 2, nil, ""},
		{"into empty file", "", 0, 0, []string{"x", "y"}, "x\ny\n"},
		{"pure insertion at start", "a\n", 0, 0, []string{"z"}, "z\na\n"},
		{"lone cr dominant", "a\rb\rc\n", 1, 1, []string{"B"}, "a\rB\rc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(Apply(Split([]byte(tt.disk)), tt.start, tt.del, tt.add))
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func numbered(n int) []Line {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f() {\n")
	for i := 3; i < n-1; i++ {
		fmt.Fprintf(&b, "\tx%d := \"v%d\"\n", i, i)
	}
	b.WriteString("}\n")
	return Split([]byte(b.String()))
}

func TestWritePatch(t *testing.T) {
	view := Split([]byte("package p\n\nfunc f() {\n\ta := 1\n\tb := 2\n\tc := 3\n\td := 4\n\te := 5\n}\n"))
	e := Edit{Start: 5, Del: 1, Add: []string{"\tc := 33", "\tcc := 4"}}
	p := WritePatch("dir/f.go", view, e, 2, HeaderScope)
	want := "*** Begin Patch\n*** Update File: dir/f.go\n@@ func f() {\n" +
		" \ta := 1\n \tb := 2\n-\tc := 3\n+\tc := 33\n+\tcc := 4\n \td := 4\n \te := 5\n" +
		"*** End Patch\n"
	if p.Text != want {
		t.Errorf("patch:\n%s\nwant:\n%s", p.Text, want)
	}
	if p.OldStart != 3 || p.OldEnd != 8 || p.EOF || p.Scope != 2 {
		t.Errorf("got %+v", p)
	}
	// Scope looks strictly above the old lines, so here (old lines start
	// at the func line) there is none and the header is bare.
	p = WritePatch("f.go", view, Edit{Start: 5, Del: 1, Add: []string{"x"}}, 3, HeaderScope)
	if !strings.Contains(p.Text, "\n@@\n") || !p.EOF || p.Scope != -1 {
		t.Errorf("got %+v", p)
	}
	p = WritePatch("f.go", view, Edit{Start: 0, Del: 1}, 3, HeaderNone)
	if strings.Contains(p.Text, "@@") || !strings.HasPrefix(p.Text, "*** Begin Patch\n*** Update File: f.go\n-package p\n") {
		t.Errorf("got %q", p.Text)
	}
}

func TestRandomEditBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lines := numbered(12)
	for i := 0; i < 2000; i++ {
		e := RandomEdit(r, lines)
		if e.Start < 0 || e.Start+e.Del > len(lines) || e.Del > 5 || len(e.Add) > 5 || e.Del+len(e.Add) == 0 {
			t.Fatalf("bad edit %+v", e)
		}
		e = EditNear(r, lines, 3)
		if e.Start+e.Del+3 < len(lines) || e.Start+e.Del > len(lines) {
			t.Fatalf("EditNear not near the end: %+v of %d", e, len(lines))
		}
	}
}

func TestCoarseKey(t *testing.T) {
	same := [][2]string{
		{"x := \"a\"", "x := \u201Ca\u201D"},
		{"\tfoo()  ", "\tfoo()"},
		{"caf\u00e9", "cafe\u0301"},
		{"a \u2014 b\u2026", "a - b..."},
		{"a\u00a0b", "a b"},
	}
	for _, s := range same {
		if CoarseKey(s[0]) != CoarseKey(s[1]) {
			t.Errorf("CoarseKey(%q) != CoarseKey(%q)", s[0], s[1])
		}
	}
	if CoarseKey("x1") == CoarseKey("x2") {
		t.Error("different letters must differ")
	}
}

// TestNewCase checks each kind's drift does what it says, and that the
// expected bytes equal the edit applied by hand for the kinds that keep
// line positions.
func TestNewCase(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	orig := Split([]byte("package p\n\nimport \"fmt\"\n\nfunc f() {\n" + strings.Repeat("\tfmt.Println(\"it's\")\n\tx++\n", 10) +
		"\ty := 'c'\n\treturn\n}\n\nfunc g() {\n\tz := \"q\"\n\t_ = z\n}\n"))
	for _, k := range Kinds {
		made := 0
		for i := 0; i < 50; i++ {
			c, ok := NewCase(r, k, "p.go", orig)
			if !ok {
				continue
			}
			made++
			checkCase(t, c)
		}
		if made == 0 {
			t.Errorf("%s: no case could be made", k)
		}
	}
}

func checkCase(t *testing.T, c *Case) {
	t.Helper()
	os, oe := c.Patch.OldStart, c.Patch.OldEnd
	changedLines := 0
	for i := range c.Orig {
		if c.Kind == DuplicatedBlock || c.Kind == AlreadyApplied {
			break
		}
		if c.Orig[i] != c.Disk[i] {
			changedLines++
			if c.Kind != CRLF && c.Kind != NoFinalNewline && c.Kind != BOM && c.Kind != Reindented && (i < os || i >= oe) {
				t.Errorf("%s: line %d outside the old lines changed", c, i+1)
			}
		}
	}
	switch c.Kind {
	case None, CurlyInPatch:
		if changedLines != 0 {
			t.Errorf("%s: disk changed", c)
		}
	case CurlyInFile, TrailingSpaces, TabsToSpaces, ChangedContext, RewrittenRegion, EditedEdge:
		if changedLines == 0 {
			t.Errorf("%s: disk unchanged", c)
		}
	case Reindented:
		// Only leading whitespace changed, in the file or in the
		// author's copy, and the added lines follow it.
		for i := range c.Orig {
			if strings.TrimLeft(c.Orig[i].Text, " \t") != strings.TrimLeft(c.Disk[i].Text, " \t") ||
				strings.TrimLeft(c.Orig[i].Text, " \t") != strings.TrimLeft(c.View[i].Text, " \t") {
				t.Errorf("%s: line %d changed beyond its indentation", c, i+1)
			}
		}
		if changedLines == 0 && fmt.Sprint(c.View) == fmt.Sprint(c.Orig) {
			t.Errorf("%s: no indentation changed", c)
		}
		if len(c.diskAdd()) != len(c.Edit.Add) {
			t.Errorf("%s: %d added lines on disk, %d in the patch", c, len(c.diskAdd()), len(c.Edit.Add))
		}
	case AlreadyApplied:
		if !c.Done || !bytes.Equal(c.Expected(), c.DiskBytes()) {
			t.Errorf("%s: a done edit must leave the disk as it is", c)
		}
		want := Apply(c.Orig, c.Edit.Start, c.Edit.Del, c.Edit.Add)
		if !bytes.Equal(c.DiskBytes(), want) {
			t.Errorf("%s: the disk does not hold the edit", c)
		}
		return
	case CRLF:
		if DominantEOL(c.Disk) != "\r\n" {
			t.Errorf("%s: not CRLF", c)
		}
	case NoFinalNewline:
		if c.Disk[len(c.Disk)-1].EOL != "" {
			t.Errorf("%s: final newline kept", c)
		}
	case BOM:
		if !bytes.HasPrefix(c.DiskBytes(), []byte("\ufeff")) || !bytes.HasPrefix(c.Expected(), []byte("\ufeff")) {
			t.Errorf("%s: BOM missing on disk or in the expected bytes", c)
		}
		if bytes.Count(c.Expected(), []byte("\ufeff")) != 1 {
			t.Errorf("%s: expected bytes hold the BOM more than once", c)
		}
	case MixedEOL:
		if changedLines == 0 || DominantEOL(c.Disk) != "\n" {
			t.Errorf("%s: no CRLF lines, or CRLF dominant", c)
		}
	case DuplicatedBlock:
		if len(c.Disk) != len(c.Orig)+oe-os {
			t.Errorf("%s: %d lines, want %d", c, len(c.Disk), len(c.Orig)+oe-os)
		}
		if countBlock(c.Disk, Texts(c.View[os:oe])) < 2 {
			t.Errorf("%s: block not duplicated", c)
		}
	}
	if c.Kind == CurlyInPatch && fmt.Sprint(c.View) == fmt.Sprint(c.Orig) {
		t.Errorf("%s: view not curled", c)
	}
	if c.Kind == RewrittenRegion && c.Want != MustRefuse {
		t.Errorf("%s: want %s", c, c.Want)
	}
	// The disk line at DiskStart+k stands for view line Start+k.
	for k := 0; k < c.Edit.Del; k++ {
		v, d := c.View[c.Edit.Start+k].Text, c.Disk[c.DiskStart+k].Text
		if c.Kind != RewrittenRegion && CoarseKey(v) != CoarseKey(d) && c.Kind != ChangedContext && c.Kind != EditedEdge {
			t.Errorf("%s: removed line %d maps to %q, view has %q", c, k, d, v)
		}
	}
	// For kinds that keep the terminators, the expected text is exactly
	// the disk with the edit spliced in.
	if c.Kind != CRLF && c.Kind != NoFinalNewline && c.Kind != BOM && c.Kind != MixedEOL {
		var b bytes.Buffer
		b.Write(Join(c.Disk[:c.DiskStart]))
		for _, a := range c.diskAdd() {
			b.WriteString(a + "\n")
		}
		b.Write(Join(c.Disk[c.DiskStart+c.Edit.Del:]))
		if got := c.Expected(); !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s: Expected differs from the hand splice", c)
		}
	}
}

func TestDuplicateWant(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	orig := numbered(60)
	seen := map[Want]int{}
	for i := 0; i < 300; i++ {
		c, ok := NewCase(r, DuplicatedBlock, "p.go", orig)
		if !ok {
			t.Fatal("no duplicate case")
		}
		seen[c.Want]++
		if c.Want == MustRefuse {
			// Both copies must lie below the scope line.
			first := -1
			for p := 0; p+c.Patch.OldEnd-c.Patch.OldStart <= len(c.Disk); p++ {
				if countBlock(c.Disk[p:p+c.Patch.OldEnd-c.Patch.OldStart], Texts(c.View[c.Patch.OldStart:c.Patch.OldEnd])) == 1 {
					first = p
					break
				}
			}
			if c.Patch.Scope >= 0 && first <= c.Patch.Scope {
				t.Errorf("%s: a copy lies above the scope line", c)
			}
		}
	}
	if seen[MustRefuse] == 0 || seen[Either] == 0 {
		t.Errorf("outcomes %v: want both refuse and either cases", seen)
	}
}

func TestSpreadEditsAndUpdateHunk(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	lines := numbered(400)
	for _, k := range []int{1, 10, 50} {
		edits := SpreadEdits(r, lines, k, 3)
		if len(edits) == 0 || len(edits) > k {
			t.Fatalf("k=%d: %d edits", k, len(edits))
		}
		end := -1
		for _, e := range edits {
			if e.Start-3 <= end {
				t.Fatalf("k=%d: spans overlap or touch: %+v", k, edits)
			}
			end = e.Start + e.Del + 3 - 1
		}
		h := UpdateHunk("p.go", lines, edits, 3)
		if got := strings.Count(h, "\n@@\n") + strings.Count(h[:3], "@@\n"); got != len(edits) {
			t.Errorf("k=%d: %d chunks for %d edits:\n%s", k, got, len(edits), h)
		}
		if strings.Contains(h, "Begin Patch") || strings.Contains(h, "End Patch") {
			t.Errorf("envelope inside the hunk")
		}
		// Splicing all edits equals splicing them one by one from the end.
		want := Join(lines)
		for i := len(edits) - 1; i >= 0; i-- {
			e := edits[i]
			want = Apply(Split(want), e.Start, e.Del, e.Add)
		}
		if got := ApplyAll(lines, edits); !bytes.Equal(got, want) {
			t.Errorf("k=%d: ApplyAll differs from repeated Apply", k)
		}
	}
}

func TestNewCaseOldLinesUniqueInView(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	// Three identical runs: many edits have an old-line block that repeats.
	half := "\tx := 1\n\ty := 2\n\tz := 3\n\tw := 4\n\tv := 5\n\tu := 6\n"
	orig := Split([]byte("top\n" + half + half + half + "bottom\n"))
	for i := 0; i < 200; i++ {
		c, ok := NewCase(r, None, "p.go", orig)
		if !ok {
			continue
		}
		if n := countBlock(c.View, Texts(c.View[c.Patch.OldStart:c.Patch.OldEnd])); n != 1 {
			t.Fatalf("%s: old lines occur %d times in the view", c, n)
		}
	}
}
