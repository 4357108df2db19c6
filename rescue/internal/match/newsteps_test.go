package match

import (
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// The three steps added for stale patches from real edit history: a
// chunk placed through one mapping of leading whitespace, a chunk whose
// first or last context line someone edited, and a chunk whose change is
// already in the file.

func TestPlaceIndent(t *testing.T) {
	tabs := "func f() {\n\tif ok {\n\t\told()\n\t}\n\treturn\n}\n"
	body := []string{" func f() {", " \tif ok {", "-\t\told()", "+\t\tnew()", "+\t\tif x {", "+\t\t\tdeep()", "+\t\t}", "+", " \t}", " \treturn"}
	spaces := func(s string) string { return strings.ReplaceAll(s, "\t", "    ") }
	spacedBody := make([]string, len(body))
	for i, l := range body {
		spacedBody[i] = l[:1] + spaces(l[1:])
	}
	runPlaceCases(t, []placeCase{
		{name: "tabs became four spaces: context keeps the file, added lines follow the mapping",
			file:       spaces(tabs),
			chunks:     []*patch.Chunk{chunk(nil, false, body...)},
			strategies: []string{StrategyIndent},
			want:       "func f() {\n    if ok {\n        new()\n        if x {\n            deep()\n        }\n\n    }\n    return\n}",
			check:      wantRepair(patch.RepairIndentation, `each leading "\t" -> "    "`)},
		{name: "the author's copy had spaces where the file has tabs",
			file:       tabs,
			chunks:     []*patch.Chunk{chunk(nil, false, spacedBody...)},
			strategies: []string{StrategyIndent},
			want:       "func f() {\n\tif ok {\n\t\tnew()\n\t\tif x {\n\t\t\tdeep()\n\t\t}\n\n\t}\n\treturn\n}",
			check:      wantRepair(patch.RepairIndentation, `each leading "    " -> "\t"`)},
		{name: "a block re-indented by one more tab",
			file:       "top\n\tfunc f() {\n\t\tif ok {\n\t\t\told()\n\t\t}\n\t\treturn\n\t}\n",
			chunks:     []*patch.Chunk{chunk(nil, false, body...)},
			strategies: []string{StrategyIndent},
			want:       "top\n\tfunc f() {\n\t\tif ok {\n\t\t\tnew()\n\t\t\tif x {\n\t\t\t\tdeep()\n\t\t\t}\n\n\t\t}\n\t\treturn\n\t}",
			check:      wantRepair(patch.RepairIndentation, `prefix "\t" added`)},
		{name: "a block lost a leading tab; an added line outside the mapping stays as written",
			file:       "if ok {\n\told()\n}\nreturn\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " \tif ok {", "-\t\told()", "+\t\tnew()", "+top()", " \t}", " \treturn")},
			strategies: []string{StrategyIndent},
			want:       "if ok {\n\tnew()\ntop()\n}\nreturn",
			check:      wantRepair(patch.RepairIndentation, `prefix "\t" removed`)},
		{name: "a lone non-blank line never moves between levels",
			file:      "root:\n  child:\n    enabled: false\nnext: true\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-enabled: false", "+enabled: true")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "two levels merged into one are no mapping",
			file:      "x\nfoo:\nbar: 1\ny\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " foo:", "-  bar: 1", "+  bar: 2")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "only some lines re-indented is no mapping",
			file:      "func f() {\n    a()\n\tb()\n\tc()\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " \ta()", " \tb()", "-\tc()", "+\tC()")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "two mappings that re-indent an added line differently leave the chunk unplaced",
			// Two spaces to four is a unit swap and a prefix of two
			// spaces added; they disagree on the deeper added line.
			file:      "a:\n    b: 1\n    c: 2\nz\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "   b: 1", "-  c: 2", "+  c: 3", "+    d: 4")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "two mappings that agree on every added line place it",
			file:       "a:\n    b: 1\n    c: 2\nz\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "   b: 1", "-  c: 2", "+  c: 3")},
			strategies: []string{StrategyIndent},
			want:       "a:\n    b: 1\n    c: 3\nz"},
		{name: "two places that agree apart from whitespace are refused",
			file:      "  x := 1\n  y := 2\nsep\n    x := 1\n    y := 2\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " x := 1", "-y := 2", "+y := 3")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "the meant place changed since, a copy at another level agrees: refused as a look-alike",
			file:      "func a() {\n\tx := 1\n\ty := 2\n\tchanged := 3\n\tw := 4\n}\nfunc b() {\n\tif ok {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 3\n\t\tw := 4\n\t}\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " \tx := 1", " \ty := 2", "-\tz := 3", "+\tz := 30", " \tw := 4")},
			errPrefix: pfx + "Indentation rescue was ambiguous", cands: []int{2, 9}},
		{name: "the copy at another level alone is placed",
			file:       "func b() {\n\tif ok {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 3\n\t\tw := 4\n\t}\n}\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " \tx := 1", " \ty := 2", "-\tz := 3", "+\tz := 30", " \tw := 4")},
			strategies: []string{StrategyIndent},
			want:       "func b() {\n\tif ok {\n\t\tx := 1\n\t\ty := 2\n\t\tz := 30\n\t\tw := 4\n\t}\n}"},
		{name: "End of File: the re-indented lines must end the file",
			file:      "\t\ta()\n\t\tb()\nmore\n",
			chunks:    []*patch.Chunk{chunk(nil, true, " \ta()", "-\tb()", "+\tB()")},
			errPrefix: pfx + "Failed to find expected lines"},
	})
}

func TestIndentMaps(t *testing.T) {
	for _, tc := range []struct {
		name      string
		old, file []string
		want      []string
	}{
		{"tab to four spaces", []string{"", "\t", "\t\t"}, []string{"", "    ", "        "}, []string{`each leading "\t" -> "    "`}},
		{"four spaces to tab", []string{"    ", "        "}, []string{"\t", "\t\t"}, []string{`each leading "    " -> "\t"`}},
		{"tab to two spaces keeps alignment", []string{"\t  ", "\t"}, []string{"    ", "  "}, []string{`each leading "\t" -> "  "`}},
		{"prefix added", []string{"", "\t"}, []string{"\t", "\t\t"}, []string{`prefix "\t" added`}},
		{"prefix removed", []string{"\t\t", "\t"}, []string{"\t", ""}, []string{`prefix "\t" removed`}},
		{"two spaces to four, or two added", []string{"  "}, []string{"    "}, []string{`each leading "  " -> "    "`, `prefix "  " added`}},
		{"levels merged", []string{"\t", "    "}, []string{"    ", "    "}, nil},
		{"inconsistent", []string{"\t", "\t"}, []string{"\t", "    "}, nil},
		{"removed prefix missing on one line", []string{"\t\t", ""}, []string{"\t", ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range indentMaps(tc.old, tc.file) {
				got = append(got, m.String())
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("mappings %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSameLine(t *testing.T) {
	for _, tc := range []struct {
		old, file string
		want      bool
	}{
		{"\tx := compute(a, b)", "\tx := compute(a, b) // why", true},
		{"}", "} // end of loop", true},
		{"\ttimeout := 30", "\ttimeout := 45", true},
		{"\treturn nil", "\treturn err", true},
		{"func f() {", "func f()", true},
		{"\tx := compute(a, b)", "    x := compute(a, b) // why", false}, // indentation differs
		{"}", "})", false},
		{"x++", "x--", false},
		{"\treturn nil", "\tpanic(\"unreachable\")", false},
		{"", "\tx := 1", false},
		{"\tx := 1", "", false},
		{"\tx := 1", "\tx := 1", false},
	} {
		if got := sameLine(tc.old, tc.file); got != tc.want {
			t.Errorf("sameLine(%q, %q) = %v, want %v", tc.old, tc.file, got, tc.want)
		}
	}
}

func TestPlaceEditedEdge(t *testing.T) {
	body := []string{" c1 := one()", " c2 := two()", " c3 := three()", "-r1 := old()", "+r1 := new()", " c4 := four()", " c5 := five()", " c6 := six()"}
	block := "c1 := one()\nc2 := two()\nc3 := three()\nr1 := old()\nc4 := four()\nc5 := five()\nc6 := six()\n"
	runPlaceCases(t, []placeCase{
		{name: "a comment appended to the first line",
			file:       "top\n" + strings.Replace(block, "c1 := one()", "c1 := one() // why", 1) + "end\n",
			chunks:     []*patch.Chunk{chunk(nil, false, body...)},
			strategies: []string{StrategyEditedEdge}, starts: []int{1},
			want: "top\nc1 := one() // why\nc2 := two()\nc3 := three()\nr1 := new()\nc4 := four()\nc5 := five()\nc6 := six()\nend"},
		{name: "a value changed in the last line",
			file:       strings.Replace(block, "c6 := six()", "c6 := six(2)", 1),
			chunks:     []*patch.Chunk{chunk(nil, false, body...)},
			strategies: []string{StrategyEditedEdge},
			want:       "c1 := one()\nc2 := two()\nc3 := three()\nr1 := new()\nc4 := four()\nc5 := five()\nc6 := six(2)"},
		{name: "an edge line rewritten beyond recognition is refused",
			file:      strings.Replace(block, "c1 := one()", "somethingElse(42)", 1),
			chunks:    []*patch.Chunk{chunk(nil, false, body...)},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "an edited line next to the change is not an edge rescue",
			file:      strings.Replace(block, "c3 := three()", "c3 := three() // why", 1),
			chunks:    []*patch.Chunk{chunk(nil, false, " c3 := three()", "-r1 := old()", "+r1 := new()", " c4 := four()", " c5 := five()", " c6 := six()")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "the rest of the chunk at two places is ambiguous",
			file:      strings.Replace(block, "c1 := one()", "c1 := one() // a", 1) + "sep\n" + strings.Replace(block, "c1 := one()", "c1 := one() // b", 1),
			chunks:    []*patch.Chunk{chunk(nil, false, body...)},
			errPrefix: pfx + "Edited-edge rescue was ambiguous", cands: []int{1, 9}},
		{name: "the meant place rewritten inside, a similar block elsewhere: refused",
			// The author meant the first block; someone rewrote the lines
			// it removes. The second block differed in its first line
			// from the start and now matches every other line.
			file: "c1 := one()\nc2 := two()\nc3 := three()\nx1\nx2\nx3\nx4\nx5\nc4 := four()\nc5 := five()\nc6 := six()\nsep\n" +
				"c1 := one() // other\nc2 := two()\nc3 := three()\nr1\nr2\nr3\nr4\nr5\nc4 := four()\nc5 := five()\nc6 := six()\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " c1 := one()", " c2 := two()", " c3 := three()", "-r1", "-r2", "-r3", "-r4", "-r5", "+new", " c4 := four()", " c5 := five()", " c6 := six()")},
			errPrefix: pfx + "Edited-edge rescue was ambiguous", cands: []int{1, 13}},
		{name: "the similar block alone is placed",
			file:       "c1 := one() // other\nc2 := two()\nc3 := three()\nr1\nr2\nr3\nr4\nr5\nc4 := four()\nc5 := five()\nc6 := six()\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " c1 := one()", " c2 := two()", " c3 := three()", "-r1", "-r2", "-r3", "-r4", "-r5", "+new", " c4 := four()", " c5 := five()", " c6 := six()")},
			strategies: []string{StrategyEditedEdge},
			want:       "c1 := one() // other\nc2 := two()\nc3 := three()\nnew\nc4 := four()\nc5 := five()\nc6 := six()"},
		{name: "a frame made of the lines the chunk removes is the accepted place, not a rival",
			// Without its edited first line the chunk is framed again
			// at the second "if err != nil {", with the region between
			// empty; but the line above it is not the author's first
			// line, so that frame is the accepted place read otherwise.
			file:       "a := first() // edited\nif err != nil {\n\treturn\n}\nb := second()\nif err != nil {\n\treturn\n}\ncall(a, b)\ndone()\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " a := first()", " if err != nil {", " \treturn", "-}", "-b := second()", "-if err != nil {", "-\treturn", " }", " call(a, b)", " done()")},
			strategies: []string{StrategyEditedEdge},
			want:       "a := first() // edited\nif err != nil {\n\treturn\n}\ncall(a, b)\ndone()"},
		{name: "a look-alike that only LCS would take differs in two lines: the edited edge places the chunk",
			// LCS takes the second block (first and last lines match,
			// 6 of 8 agree) and refuses, the first being a look-alike;
			// the first differs from the author's lines in one edited
			// line, the second in two.
			file: "c1 := one() // why\nc2 := two()\nc3 := three()\nr1 := old()\nc4 := four()\nc5 := five()\nc6 := six()\nc7 := seven()\nsep\n" +
				"c1 := one()\nc2 := two()\nc3 := three()\nr1 := old()\nx := other()\ny := other()\nc6 := six()\nc7 := seven()\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " c1 := one()", " c2 := two()", " c3 := three()", "-r1 := old()", "+r1 := new()", " c4 := four()", " c5 := five()", " c6 := six()", " c7 := seven()")},
			strategies: []string{StrategyEditedEdge},
			want: "c1 := one() // why\nc2 := two()\nc3 := three()\nr1 := new()\nc4 := four()\nc5 := five()\nc6 := six()\nc7 := seven()\nsep\n" +
				"c1 := one()\nc2 := two()\nc3 := three()\nr1 := old()\nx := other()\ny := other()\nc6 := six()\nc7 := seven()"},
		{name: "a look-alike LCS would take that differs in one line is as close: refused",
			file: "c1 := one() // why\nc2 := two()\nc3 := three()\nr1 := old()\nc4 := four()\nc5 := five()\nc6 := six()\nc7 := seven()\nsep\n" +
				"c1 := one()\nc2 := two()\nc3 := three()\nr1 := old()\nc4 := four()\ny := other()\nc6 := six()\nc7 := seven()\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " c1 := one()", " c2 := two()", " c3 := three()", "-r1 := old()", "+r1 := new()", " c4 := four()", " c5 := five()", " c6 := six()", " c7 := seven()")},
			errPrefix: pfx + "LCS rescue was ambiguous"},
		{name: "a look-alike as close only once re-indented does not stop the edited edge",
			// The second block agrees with five of the six lines by key,
			// but one level deeper: it differs in its indentation and a
			// line at once, the accepted place in one edited line.
			file:       "\tc1 := one() // why\n\tc2 := two()\n\tc3 := three()\n\tr1 := old()\n\tc4 := four()\n\tc5 := five()\nsep\n\t\tc1 := one()\n\t\tc2 := two()\n\t\tc3 := three()\n\t\tr1 := old()\n\t\tc4 := four()\n\t\tc5 := other()\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " \tc1 := one()", " \tc2 := two()", " \tc3 := three()", "-\tr1 := old()", "+\tr1 := new()", " \tc4 := four()", " \tc5 := five()")},
			strategies: []string{StrategyEditedEdge},
			want:       "\tc1 := one() // why\n\tc2 := two()\n\tc3 := three()\n\tr1 := new()\n\tc4 := four()\n\tc5 := five()\nsep\n\t\tc1 := one()\n\t\tc2 := two()\n\t\tc3 := three()\n\t\tr1 := old()\n\t\tc4 := four()\n\t\tc5 := other()"},
		{name: "the same look-alike at the author's indentation is as close: refused",
			file:      "\tc1 := one() // why\n\tc2 := two()\n\tc3 := three()\n\tr1 := old()\n\tc4 := four()\n\tc5 := five()\nsep\n\tc1 := one()\n\tc2 := two()\n\tc3 := three()\n\tr1 := old()\n\tc4 := four()\n\tc5 := other()\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " \tc1 := one()", " \tc2 := two()", " \tc3 := three()", "-\tr1 := old()", "+\tr1 := new()", " \tc4 := four()", " \tc5 := five()")},
			errPrefix: pfx + "Edited-edge rescue was ambiguous", cands: []int{1, 8}},
		{name: "an insertion at the file's start below three lines, the last edited",
			file:       "// Copyright.\n// Use of this.\n// license file. // edited\n\npackage p\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "+// new", " // Copyright.", " // Use of this.", " // license file.")},
			strategies: []string{StrategyEditedEdge},
			want:       "// new\n// Copyright.\n// Use of this.\n// license file. // edited\n\npackage p"},
		{name: "an End of File append after three lines, the first edited",
			file:       "package p\n\nfunc f() int65 {\n\treturn 1\n}\n",
			chunks:     []*patch.Chunk{chunk(nil, true, " func f() int64 {", " \treturn 1", " }", "+// more")},
			strategies: []string{StrategyEditedEdge},
			want:       "package p\n\nfunc f() int65 {\n\treturn 1\n}\n// more"},
		{name: "three old lines away from the file's edge are too few",
			file:      "x\n// Copyright.\n// Use of this.\n// license file. // edited\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "+// new", " // Copyright.", " // Use of this.", " // license file.")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "three old lines at the file's start, two of them elsewhere: refused",
			file:      "// A.\n// B.\n// C. // edited\nsep\n// Z.\n// B.\n// C.\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "+// new", " // A.", " // B.", " // C.")},
			errPrefix: pfx + "Edited-edge rescue was ambiguous", cands: []int{1, 5}},
		{name: "the meant place with one line changed, a similar block elsewhere: refused as a look-alike",
			file: "c1 := one()\nc2 := two()\nc3 := three()\nr1 := changed()\nc4 := four()\nc5 := five()\nc6 := six()\nsep\n" +
				strings.Replace(block, "c1 := one()", "c1 := one() // other", 1),
			chunks:    []*patch.Chunk{chunk(nil, false, body...)},
			errPrefix: pfx + "Edited-edge rescue was ambiguous", cands: []int{1, 9}},
	})
}

func TestPlaceAlreadyApplied(t *testing.T) {
	runPlaceCases(t, []placeCase{
		{name: "the change is in the file: nothing changes",
			file:       "a\nb\nc\nNEW\nd\ne\nf\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " a", " b", " c", "-old", "+NEW", " d", " e", " f")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "a\nb\nc\nNEW\nd\ne\nf",
			check:      wantRepair(patch.RepairAlreadyApplied, "")},
		{name: "an insertion whose added lines end like its context, already made",
			// The old lines occur at the end of the inserted block.
			file:       "x\n}\n\nfunc g() {\n}\n\nvar v\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " }", " ", "+func g() {", "+}", "+", " var v")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "x\n}\n\nfunc g() {\n}\n\nvar v"},
		{name: "an End of File append already made, the old lines found earlier",
			file:       "\treturn\n}\n\nfunc g() {\n\treturn\n}\n",
			chunks:     []*patch.Chunk{chunk(nil, true, " \treturn", " }", "+", "+func g() {", "+\treturn", "+}")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "\treturn\n}\n\nfunc g() {\n\treturn\n}"},
		{name: "an End of File append where other lines were appended since is refused",
			file:      "\treturn\n}\n\nfunc other() {\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, true, " \treturn", " }", "+", "+func g() {", "+}")},
			errPrefix: pfx + "Failed to find expected lines at the end"},
		{name: "the change looks made, but the expected lines drifted elsewhere: refused",
			file:      "a\nb\nc\nNEW\nd\ne\nf\nsep\n  a\n  b\n  c\n  old\n  d\n  e\n  f\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " a", " b", " c", "-old", "+NEW", " d", " e", " f")},
			errPrefix: pfx + "The change looks already made", cands: []int{1, 7}},
		{name: "old lines found and new lines elsewhere: the old place is edited",
			file:       "a\nb\nold\nc\nsep\na\nb\nNEW\nc\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " a", " b", "-old", "+NEW", " c")},
			strategies: []string{StrategyExact},
			want:       "a\nb\nNEW\nc\nsep\na\nb\nNEW\nc"},
		{name: "removed lines someone rewrote at the start of the file are not a deletion already made",
			file:      "rewritten1\nrewritten2\nfunc f() {\n\tbody()\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-// header", "-", " func f() {", " \tbody()")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "a change of the file's first lines already made: the file's start frames it",
			// The chunk starts with a removed line, so no context line
			// frames the change from above; the new lines start the file.
			file:       "// New header.\npackage p\n\nimport (\n\t\"fmt\"\n)\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "-// Copyright 2020.", "-// License.", "+// New header.", " package p", " ", " import (")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "// New header.\npackage p\n\nimport (\n\t\"fmt\"\n)",
			check:      wantRepair(patch.RepairAlreadyApplied, "")},
		{name: "a deletion of the file's first lines already made",
			file:       "package p\n\nimport (\n)\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "-// Copyright 2020.", "-", " package p", " ", " import (")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "package p\n\nimport (\n)"},
		{name: "a change of the file's last lines already made, without End of File",
			file:       "a\nb\nc\nNEW\n",
			chunks:     []*patch.Chunk{chunk(nil, false, " a", " b", " c", "-old", "+NEW")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "a\nb\nc\nNEW"},
		{name: "the new lines of a first-lines change not at the file's start are not the change made",
			file:      "// someone's line\n// New header.\npackage p\n\nimport (\n)\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-// Copyright 2020.", "+// New header.", " package p", " ", " import (")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "a first-lines change made, but its context stands elsewhere too: refused",
			// The author may have meant the second block, whose removed
			// line someone rewrote; only the file's start tells them apart.
			file:      "// new\nfunc f() {\n\tbody()\n}\n// someone's\nfunc f() {\n\tbody()\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-// old", "+// new", " func f() {", " \tbody()")},
			errPrefix: pfx + "The change looks already made", cands: []int{1, 6}},
		{name: "an insertion without leading context, already made before its old lines",
			file:       "new1\nnew2\n// a\n// b\n// c\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "+new1", "+new2", " // a", " // b", " // c")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "new1\nnew2\n// a\n// b\n// c"},
		{name: "the trailing-empty retry refuses a look-alike of the drifted place meant",
			// Without its blank last line the chunk matches the second
			// block as it is; the first, re-indented, is the one meant.
			file:      "func a() {\n    if x {\n        y()\n    }\n}\n\nfunc b() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " \tif x {", " \t\ty()", "+\t\tz()", " \t}", " }", " ")},
			errPrefix: pfx + "Expected lines match more than one place", cands: []int{1, 8}},
		{name: "a chunk that changes nothing is placed where its lines are",
			file:       "a\nb\n\t}\nc\nsep\na\nb\n\t}\nc2\n",
			chunks:     []*patch.Chunk{chunk(nil, true, " b", "-\t}", "+\t}", " c2")},
			strategies: []string{StrategyExact},
			want:       "a\nb\n\t}\nc\nsep\na\nb\n\t}\nc2"},
		{name: "a single new line is not enough to call it made",
			file:      "x\nNEW\ny\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-old", "+NEW")},
			errPrefix: pfx + "Failed to find expected lines"},
	})
}

// wantRepair checks that the single chunk's placement records a repair of
// kind with detail.
func wantRepair(kind, detail string) func(t *testing.T, pls []*Placement) {
	return func(t *testing.T, pls []*Placement) {
		t.Helper()
		for _, r := range pls[0].Repairs {
			if r.Kind == kind && r.Detail == detail {
				return
			}
		}
		t.Errorf("repairs %+v, want %s %q", pls[0].Repairs, kind, detail)
	}
}
