package match

import (
	"reflect"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

const (
	pfx  = "apply_patch verification failed: "
	hint = ". Add unchanged context lines around the change, or an @@ line naming the enclosing function or section, so that only one place matches."
)

type placeCase struct {
	name      string
	file      string
	exactOnly bool
	cursor    int
	chunks    []*patch.Chunk

	want       string // final text (lines joined with LF, no final LF) when no error
	strategies []string
	starts     []int // Placement.Start per chunk, when set
	eofKept    []bool
	cands      []int // Candidates of the error, or of the single chunk
	wantErr    string
	errPrefix  string
	check      func(t *testing.T, pls []*Placement)
}

func runPlaceCases(t *testing.T, cases []placeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := splitText(tc.file)
			v := NewFileView(lines, tc.exactOnly)
			pls, err := placeAll(v, tc.cursor, tc.chunks)
			if tc.wantErr != "" || tc.errPrefix != "" {
				if err == nil {
					t.Fatalf("placed %+v, want error", pls)
				}
				se, me := asVerification(t, err)
				if tc.wantErr != "" && se.Message != tc.wantErr {
					t.Fatalf("message\n%q\nwant\n%q", se.Message, tc.wantErr)
				}
				if tc.errPrefix != "" && !strings.HasPrefix(se.Message, tc.errPrefix) {
					t.Fatalf("message\n%q\nwant prefix\n%q", se.Message, tc.errPrefix)
				}
				if tc.cands != nil && !reflect.DeepEqual(me.Candidates, tc.cands) {
					t.Fatalf("candidates %v, want %v", me.Candidates, tc.cands)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			for _, pl := range pls {
				checkConsistent(t, lines, pl)
			}
			got := strings.Join(applyPlacements(lines, pls), "\n")
			if got != tc.want {
				t.Fatalf("result\n%q\nwant\n%q\nplacements %+v", got, tc.want, pls)
			}
			for i, s := range tc.strategies {
				if pls[i].Strategy != s {
					t.Errorf("chunk %d strategy %q, want %q", i, pls[i].Strategy, s)
				}
			}
			for i, s := range tc.starts {
				if pls[i].Start != s {
					t.Errorf("chunk %d start %d, want %d", i, pls[i].Start, s)
				}
			}
			for i, k := range tc.eofKept {
				if pls[i].EOFKept != k {
					t.Errorf("chunk %d EOFKept %v, want %v", i, pls[i].EOFKept, k)
				}
			}
			if tc.cands != nil && !reflect.DeepEqual(pls[0].Candidates, tc.cands) {
				t.Errorf("candidates %v, want %v", pls[0].Candidates, tc.cands)
			}
			if tc.check != nil {
				tc.check(t, pls)
			}
		})
	}
}

func notFoundMsg(old string, closest string) string {
	return pfx + "Failed to find expected lines in " + testAbs + ":\n" + old + closest
}

// placedText lists a placement's lines as "<op><text>".
func placedText(pl *Placement) []string {
	var out []string
	for _, l := range pl.Lines {
		out = append(out, string(rune(l.Op))+l.Text)
	}
	return out
}

func wantPlaced(want ...string) func(t *testing.T, pls []*Placement) {
	return func(t *testing.T, pls []*Placement) {
		t.Helper()
		if got := placedText(pls[0]); !reflect.DeepEqual(got, want) {
			t.Fatalf("placed lines %q, want %q", got, want)
		}
	}
}

// TestPlaceLadder covers the seek step: which drift each rung forgives
// (Unicode punctuation, trailing whitespace, NFC) and which none does
// (leading whitespace, indentation), the strictest rung reported, and the
// refusal of a block that matches in more than one place. A case name
// starts with a short ID that the end-to-end case of the same behaviour in
// package rescue shares.
func TestPlaceLadder(t *testing.T) {
	runPlaceCases(t, []placeCase{
		{name: "M01 unicode-trim-end", file: "console.log(“hola”);  \n",
			chunks: []*patch.Chunk{chunk(nil, false, `-console.log("hola");`, "+x")},
			want:   "x", strategies: []string{"unicode-trim-end"}, starts: []int{0}},
		{name: "M02 no full trim", file: "  console.log(\"hola\");\n",
			chunks:    []*patch.Chunk{chunk(nil, false, `-console.log("hola");`, "+x")},
			errPrefix: notFoundMsg(`console.log("hola");`, "")},
		{name: "M03 unicode only", file: "const title = “Hola”;\n",
			chunks: []*patch.Chunk{chunk(nil, false, `-const title = "Hola";`, `+const title = "Hola mundo";`)},
			want:   `const title = "Hola mundo";`, strategies: []string{"unicode"},
			check: wantPlaced("-const title = “Hola”;", `+const title = "Hola mundo";`)},
		{name: "M04 trim-end", file: "alpha  \n",
			chunks: []*patch.Chunk{chunk(nil, false, "-alpha", "+omega")},
			want:   "omega", strategies: []string{"trim-end"}, check: wantPlaced("-alpha  ", "+omega")},
		{name: "M05 trim only refused", file: "  alpha  \n",
			chunks: []*patch.Chunk{chunk(nil, false, "-alpha", "+omega")},
			wantErr: notFoundMsg("alpha",
				"\nClosest region: lines 1-1 (1 of 1 lines agree); first difference at line 1:\n  file:    alpha  \n  patch: alpha")},
		{name: "M06 indentation refused", file: "root:\n  child:\n    enabled: false\nnext: true\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-enabled: false", "+enabled: true")},
			errPrefix: notFoundMsg("enabled: false", "\nClosest region: lines 3-3 (1 of 1 lines agree)")},
		{name: "M07 mixed quotes", file: "const title = “it’s ready”;\n",
			chunks: []*patch.Chunk{chunk(nil, false, `-const title = "it's ready";`, "+x")},
			want:   "x", strategies: []string{"unicode"}},
		{name: "M08 nbsp and ellipsis", file: "wait\u00A0for it\u2026\nz\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-wait for it...", "+done")},
			want:   "done\nz", strategies: []string{"unicode"}, check: wantPlaced("-wait\u00A0for it\u2026", "+done")},
		{name: "M09 minus sign folded", file: "x \u2212 y\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-x - y", "+x + y")},
			want:   "x + y", strategies: []string{"unicode"}},
		{name: "M09 variant typographic spaces", file: "a\u2002b\u202Fc\u205Fd\u3000e\u2009f\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-a b c d e f", "+g")},
			want:   "g", strategies: []string{"unicode"}},
		{name: "M09 variant U+2001 is not folded", file: "a\u2001b\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-a b", "+g")},
			errPrefix: notFoundMsg("a b", "")},
		{name: "M10 tab against spaces", file: "\tfoo()\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-    foo()", "+bar()")},
			errPrefix: notFoundMsg("    foo()", "")},
		{name: "M11 trailing tab", file: "foo()\t\nz\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-foo()", "+bar()")},
			want:   "bar()\nz", strategies: []string{"trim-end"}, check: wantPlaced("-foo()\t", "+bar()")},
		{name: "M12 duplicate exact block refused", file: "x\ny\nx\n",
			chunks:  []*patch.Chunk{chunk(nil, false, "-x", "+X")},
			wantErr: pfx + "Expected lines match more than one place in " + testAbs + ":\nx\nCandidates at lines 1, 3" + hint,
			cands:   []int{1, 3}},
		{name: "M12 variant exact and curly copies are two candidates", file: "say \"hi\"\nmid\nsay “hi”\n",
			chunks: []*patch.Chunk{chunk(nil, false, `-say "hi"`, "+X")},
			cands:  []int{1, 3}, errPrefix: pfx + "Expected lines match more than one place"},
		{name: "M12 variant cursor makes it unique", file: "x\ny\nx\n", cursor: 1,
			chunks: []*patch.Chunk{chunk(nil, false, "-x", "+X")},
			want:   "x\ny\nX", starts: []int{2}, cands: []int{3}},
		{name: "M13 context keeps file bytes", file: "const a = \"x\";\nold\n",
			chunks: []*patch.Chunk{chunk(nil, false, " const a = “x”;", "-old", "+new")},
			want:   "const a = \"x\";\nnew", strategies: []string{"unicode"},
			check: wantPlaced(` const a = "x";`, "-old", "+new")},
		{name: "M14 context keeps trailing spaces", file: "alpha  \nold\n",
			chunks: []*patch.Chunk{chunk(nil, false, " alpha", "-old", "+new")},
			want:   "alpha  \nnew", strategies: []string{"trim-end"}},
		{name: "M15 context via unicode, exact body", file: "“anchor”\nbody\n",
			chunks: []*patch.Chunk{chunk(ctx(`"anchor"`), false, "-body", "+BODY")},
			want:   "“anchor”\nBODY", strategies: []string{"exact"},
			check: func(t *testing.T, pls []*Placement) {
				if !reflect.DeepEqual(pls[0].Contexts, []int{0}) || len(pls[0].Repairs) != 0 {
					t.Fatalf("contexts %v repairs %v", pls[0].Contexts, pls[0].Repairs)
				}
			}},
		{name: "nfc rung", file: "cafe\u0301 au lait\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-caf\u00e9 au lait", "+tea")},
			want:   "tea", strategies: []string{"nfc"}},
		{name: "nfc rung is not nfkc", file: "\uFB01le\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-file", "+x")},
			errPrefix: notFoundMsg("file", "")},
		{name: "trim-end uses the JavaScript set: U+FEFF trimmed", file: "a\uFEFF\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-a", "+b")},
			want:   "b", strategies: []string{"trim-end"}},
		{name: "trim-end uses the JavaScript set: U+0085 kept", file: "a\u0085\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-a", "+b")},
			errPrefix: notFoundMsg("a", "")},
		{name: "strictest rung of the single candidate", file: "p\nsay “hi”  \nq\n",
			chunks: []*patch.Chunk{chunk(nil, false, " p", `-say "hi"`, "+s", " q")},
			want:   "p\ns\nq", strategies: []string{"unicode-trim-end"}, starts: []int{0}},
		{name: "exact only above the size cap", file: "say “hi”\n", exactOnly: true,
			chunks:    []*patch.Chunk{chunk(nil, false, `-say "hi"`, "+x")},
			errPrefix: notFoundMsg(`say "hi"`, "")},
		{name: "exact only still matches exactly", file: "a\nb\nc\n", exactOnly: true,
			chunks: []*patch.Chunk{chunk(nil, false, " a", "-b", "+B")},
			want:   "a\nB\nc", strategies: []string{"exact"}},
		{name: "exact only has no trailing-empty retry", file: "alpha\n", exactOnly: true,
			chunks:    []*patch.Chunk{chunk(nil, false, "-alpha", "-", "+omega", "+")},
			errPrefix: notFoundMsg("alpha\n", "")},
	})
}

// TestPlaceWindow covers the search window: cursor, @@ contexts, stacked
// contexts, contexts not found (dropped, with a repair), and end-of-file
// pinning, which makes a match at the end the only answer.
func TestPlaceWindow(t *testing.T) {
	runPlaceCases(t, []placeCase{
		{name: "P25 unified diff header dropped", file: "a\nb\nc\n",
			chunks: []*patch.Chunk{chunk(ctx("-1,3 +1,3 @@"), false, " a", "-b", "+B", " c")},
			want:   "a\nB\nc", strategies: []string{"exact"},
			check: func(t *testing.T, pls []*Placement) {
				want := []patch.Repair{{Kind: patch.RepairUnifiedDiffHeader, Line: 100}}
				if !reflect.DeepEqual(pls[0].Repairs, want) || !reflect.DeepEqual(pls[0].Contexts, []int{-1}) {
					t.Fatalf("repairs %v contexts %v", pls[0].Repairs, pls[0].Contexts)
				}
			}},
		{name: "context not found dropped", file: "a\nb\nc\n",
			chunks: []*patch.Chunk{chunk(ctx("func gone()"), false, "-b", "+B")},
			want:   "a\nB\nc",
			check: func(t *testing.T, pls []*Placement) {
				want := []patch.Repair{{Kind: patch.RepairContextNotFound, Line: 100}}
				if !reflect.DeepEqual(pls[0].Repairs, want) {
					t.Fatalf("repairs %v", pls[0].Repairs)
				}
			}},
		{name: "context not found, body must still be unique", file: "b\nb\n",
			chunks: []*patch.Chunk{chunk(ctx("func gone()"), false, "-b", "+B")},
			cands:  []int{1, 2}, errPrefix: pfx + "Expected lines match more than one place"},
		{name: "context narrows", file: "func a\nx\nfunc b\nx\n",
			chunks: []*patch.Chunk{chunk(ctx("func b"), false, "-x", "+X")},
			want:   "func a\nx\nfunc b\nX", starts: []int{3}},
		{name: "context twice with old lines after both", file: "func a\nx\nfunc a\nx\n",
			chunks: []*patch.Chunk{chunk(ctx("func a"), false, "-x", "+X")},
			cands:  []int{2, 4}, errPrefix: pfx + "Expected lines match more than one place"},
		{name: "I19 stacked contexts narrow in turn",
			file:   "class Other:\n    def method():\n        old\nclass BaseClass:\n    def method():\n        old\n",
			chunks: []*patch.Chunk{chunk(ctx("class BaseClass:", "    def method():"), false, "-        old", "+        new")},
			want:   "class Other:\n    def method():\n        old\nclass BaseClass:\n    def method():\n        new",
			starts: []int{5}, strategies: []string{"exact"},
			check: func(t *testing.T, pls []*Placement) {
				if !reflect.DeepEqual(pls[0].Contexts, []int{3, 4}) {
					t.Fatalf("contexts %v", pls[0].Contexts)
				}
			}},
		{name: "I21 chunks out of order", file: "a\nb\nc\nd\n",
			chunks:  []*patch.Chunk{chunk(nil, false, "-c", "+C"), chunk(nil, false, "-a", "+A")},
			wantErr: notFoundMsg("a", "")},
		{name: "I13 plain EOF update", file: "alpha\nbeta",
			chunks: []*patch.Chunk{chunk(nil, true, "-beta", "+omega")},
			want:   "alpha\nomega", eofKept: []bool{true}},
		{name: "I14 EOF pins the end, no ambiguity", file: "x\ny\nx\n",
			chunks: []*patch.Chunk{chunk(nil, true, "-x", "+X")},
			want:   "x\ny\nX", starts: []int{2}, eofKept: []bool{true}, cands: []int{3}},
		{name: "I14 variant tolerant copy at the end is pinned", file: "say \"a\"\ny\nsay “a”\n",
			chunks: []*patch.Chunk{chunk(nil, true, `-say "a"`, "+X")},
			want:   "say \"a\"\ny\nX", strategies: []string{"unicode"}, eofKept: []bool{true}},
		{name: "I15 EOF falls back to a forward scan", file: "x\ny\n",
			chunks: []*patch.Chunk{chunk(nil, true, "-x", "+X")},
			want:   "X\ny", eofKept: []bool{false}},
		{name: "I15 variant forward scan stays unique", file: "x\nx\ny\n",
			chunks: []*patch.Chunk{chunk(nil, true, "-x", "+X")},
			cands:  []int{1, 2}, errPrefix: pfx + "Expected lines match more than one place"},
		{name: "I16 real final blank line", file: "alpha\n\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-alpha", "-", "+omega", "+")},
			want:   "omega\n", strategies: []string{"exact"}},
		{name: "I17 trailing-empty retry", file: "alpha\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-alpha", "-", "+omega", "+")},
			want:   "omega", strategies: []string{"trailing-empty-retry"},
			check: wantPlaced("-alpha", "+omega")},
		{name: "trailing empty context line retry", file: "a\nb\n",
			chunks: []*patch.Chunk{chunk(nil, false, " a", "-b", "+B", " ")},
			want:   "a\nB", strategies: []string{"trailing-empty-retry"}},
		{name: "E02 changed removed line refused before the exact chunk after it", file: "top\nprefix\nstale-value\nsuffix\nkeep\ntail-old\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " prefix", "-old-value", "+new-value", " suffix"), chunk(nil, false, " keep", "-tail-old", "+tail-new")},
			errPrefix: notFoundMsg("prefix\nold-value\nsuffix", "")},
		{name: "E02 variant stale rescue plus an exact chunk", file: "top\nprefix\n  old-value\nsuffix\nkeep\ntail-old\n",
			chunks: []*patch.Chunk{chunk(nil, false, " prefix", "-old-value", "+new-value", " suffix"), chunk(nil, false, " keep", "-tail-old", "+tail-new")},
			want:   "top\nprefix\nnew-value\nsuffix\nkeep\ntail-new", strategies: []string{"prefix-suffix", "exact"}, starts: []int{1, 4}},
		{name: "E03 no final newline", file: "alpha\nbeta",
			chunks: []*patch.Chunk{chunk(nil, false, " alpha", "-beta", "+omega")},
			want:   "alpha\nomega", strategies: []string{"exact"}},
		{name: "E07 retry becomes an insertion into an empty file", file: "",
			chunks: []*patch.Chunk{chunk(nil, false, "-", "+x")},
			want:   "x", strategies: []string{"trailing-empty-retry"}},
	})
}

// TestPlaceRescues covers the prefix/suffix and LCS rescues, and variants
// of a case that flip its outcome: what each accepts, the look-alike places that make it ambiguous, the size and
// agreement bounds (a removed line must agree with the line it removes),
// and the file order of the lines it places.
func TestPlaceRescues(t *testing.T) {
	r03 := "left\nstale-one\nright\nseparator\nleft\nstale-two\nright\n"
	r03v := "left\n  old\nright\nseparator\nleft\n  old\nright\n"
	psBody := []string{" left", "-old", "+new", " right"}
	r12 := "head\nleft\nstable-old\nkeep\nright\ngap\nanchor\nleft\nstale-old\nkeep\nright\ntail\n"
	runPlaceCases(t, []placeCase{
		{name: "R01 changed line refused", file: "top\nprefix\nstale-value\nsuffix\nbottom\n",
			chunks:    []*patch.Chunk{chunk(ctx("top"), false, " prefix", "-old-value", "+ \tverbatim  \"\"  Ω  ", " suffix")},
			errPrefix: notFoundMsg("prefix\nold-value\nsuffix", "\nClosest region: lines 2-4 (2 of 3 lines agree); first difference at line 3:\n  file:  stale-value\n  patch: old-value")},
		{name: "R01 variant indentation drift rescued", file: "top\nprefix\n  old-value\nsuffix\nbottom\n",
			chunks: []*patch.Chunk{chunk(ctx("top"), false, " prefix", "-old-value", "+ \tverbatim  \"\"  Ω  ", " suffix")},
			want:   "top\nprefix\n \tverbatim  \"\"  Ω  \nsuffix\nbottom", strategies: []string{"prefix-suffix"},
			check: wantPlaced(" prefix", "-  old-value", "+ \tverbatim  \"\"  Ω  ", " suffix")},
		{name: "R02 stale middle refused", file: "left “x”\nstale\nright  \n",
			chunks:    []*patch.Chunk{chunk(nil, false, ` left "x"`, "-old", "+new", " right")},
			errPrefix: notFoundMsg("left \"x\"\nold\nright", "")},
		{name: "R02 variant tab-indented middle", file: "left “x”\n\told\nright  \n",
			chunks: []*patch.Chunk{chunk(nil, false, ` left "x"`, "-old", "+new", " right")},
			want:   "left “x”\nnew\nright  ", strategies: []string{"prefix-suffix"},
			check: func(t *testing.T, pls []*Placement) {
				wantPlaced(" left “x”", "-\told", "+new", " right  ")(t, pls)
				if pls[0].Score != 1 || pls[0].Needed != 1 {
					t.Fatalf("score %d needed %d", pls[0].Score, pls[0].Needed)
				}
			}},
		{name: "R03 stale blocks refused", file: r03,
			chunks: []*patch.Chunk{chunk(nil, false, psBody...)}, errPrefix: notFoundMsg("left\nold\nright", "")},
		{name: "R03 variant ambiguous", file: r03v,
			chunks:  []*patch.Chunk{chunk(nil, false, psBody...)},
			wantErr: pfx + "Prefix/suffix rescue was ambiguous in " + testAbs + ":\nleft\nold\nright\nCandidates at lines 1, 5" + hint,
			cands:   []int{1, 5}},
		{name: "R04 tolerant copies refused", file: "left\nstale-one\nright\nleft  \nstale-two\nright\n",
			chunks: []*patch.Chunk{chunk(nil, false, psBody...)}, errPrefix: notFoundMsg("left\nold\nright", "")},
		{name: "R04 variant tolerant ambiguity", file: "left\n  old\nright\nleft  \n  old\nright\n",
			chunks: []*patch.Chunk{chunk(nil, false, psBody...)}, cands: []int{1, 4},
			errPrefix: pfx + "Prefix/suffix rescue was ambiguous"},
		{name: "R05 right before left", file: "right\nleft\nstale\n",
			chunks: []*patch.Chunk{chunk(nil, false, psBody...)}, errPrefix: notFoundMsg("left\nold\nright", "")},
		{name: "R06 changed removed line after an @@ context refused", file: strings.Replace(r03, "separator", "sep", 1),
			chunks: []*patch.Chunk{chunk(ctx("sep"), false, psBody...)}, errPrefix: notFoundMsg("left\nold\nright", "")},
		{name: "R06 variant context picks the second block", file: strings.Replace(r03v, "separator", "sep", 1),
			chunks: []*patch.Chunk{chunk(ctx("sep"), false, psBody...)},
			want:   "left\n  old\nright\nsep\nleft\nnew\nright", starts: []int{4}, strategies: []string{"prefix-suffix"}},
		{name: "R07 changed removed line after an earlier chunk refused", file: "left\nstale1\nright\nmid\nleft\nstale2\nright\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-mid", "+MID"), chunk(nil, false, psBody...)},
			errPrefix: notFoundMsg("left\nold\nright", "")},
		{name: "R07 variant cursor disambiguates", file: "left\n  old\nright\nmid\nleft\n  old\nright\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-mid", "+MID"), chunk(nil, false, psBody...)},
			want:   "left\n  old\nright\nMID\nleft\nnew\nright", starts: []int{3, 4}},
		{name: "R08 changed removed line between two-line prefix and suffix refused", file: "h\np1\np2\nstale\ns1\ns2\nt\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " p1", " p2", "-old", "+new", " s1", " s2")},
			errPrefix: notFoundMsg("p1\np2\nold\ns1\ns2", "")},
		{name: "R08 variant two-line prefix and suffix", file: "h\np1\np2\n  old\ns1\ns2\nt\n",
			chunks: []*patch.Chunk{chunk(nil, false, " p1", " p2", "-old", "+new", " s1", " s2")},
			want:   "h\np1\np2\nnew\ns1\ns2\nt",
			check:  wantPlaced(" p1", " p2", "-  old", "+new", " s1", " s2")},
		{name: "R09 unbounded deletion refused", file: "A\nY1\nY2\nY3\nB\n",
			chunks: []*patch.Chunk{chunk(nil, false, " A", "+X", " B")}, errPrefix: notFoundMsg("A\nB", "")},
		{name: "R09 variant adjacent anchors insert between", file: "A\nB\n",
			chunks: []*patch.Chunk{chunk(nil, false, " A", "+X", " B")}, want: "A\nX\nB", strategies: []string{"exact"}},
		{name: "R09 variant one unseen line is not removed", file: "A\nY1\nB\n",
			chunks: []*patch.Chunk{chunk(nil, false, " A", "+X", " B")}, errPrefix: notFoundMsg("A\nB", "")},
		{name: "prefix/suffix refuses a region holding a line the author never saw", file: "A\nold1\nnew-in-file\nold2\nB\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " A", "-old1", "-old2", "+X", " B")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "prefix/suffix refuses a region missing a line the patch removes", file: "A\nold1\nB\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " A", "-old1", "-old2", "+X", " B")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "prefix/suffix refuses a removed line someone rewrote", file: "A\nold1\n  mid  \nold2\nB\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " A", "-old1", "+n1", " mid", "-old2-stale", "+n2", " B")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "prefix/suffix interior context keeps file bytes", file: "A\nold1\n  mid  \n old2\nB\n",
			chunks: []*patch.Chunk{chunk(nil, false, " A", "-old1", "+n1", " mid", "-old2", "+n2", " B")},
			want:   "A\nn1\n  mid  \nn2\nB", strategies: []string{"prefix-suffix"},
			check: wantPlaced(" A", "-old1", "+n1", "   mid  ", "- old2", "+n2", " B")},
		{name: "prefix/suffix: a changed place next to a look-alike is ambiguous",
			file:   "func a() {\n\tfor x {\n\t\ti := first()\n\n\t\tslotKey := key(i)\n  \t\treturn slot\n\t}\n}\nfunc b() {\n\tfor x {\n\t\ti := first()\nrewritten(1)\nrewritten(2)\nrewritten(3)\n\t}\n}\n",
			chunks: []*patch.Chunk{chunk(nil, false, " \tfor x {", " \t\ti := first()", "-", "-\t\tslotKey := key(i)", "-\t\treturn slot", " \t}")},
			cands:  []int{2, 10}, errPrefix: pfx + "Prefix/suffix rescue was ambiguous"},
		{name: "prefix/suffix: the look-alike alone is rescued",
			file:   "func a() {\n\tfor x {\n\t\ti := first()\n\n\t\tslotKey := key(i)\n  \t\treturn slot\n\t}\n}\n",
			chunks: []*patch.Chunk{chunk(nil, false, " \tfor x {", " \t\ti := first()", "-", "-\t\tslotKey := key(i)", "-\t\treturn slot", " \t}")},
			want:   "func a() {\n\tfor x {\n\t\ti := first()\n\t}\n}", strategies: []string{"prefix-suffix"}},
		{name: "prefix/suffix: an overlapping refused pair does not count",
			file:   "left\n  old\nright\nx\nright\n",
			chunks: []*patch.Chunk{chunk(nil, false, psBody...)},
			want:   "left\nnew\nright\nx\nright", strategies: []string{"prefix-suffix"}},
		{name: "R10 unicode-changed first line refused", file: "top\nconst a = \"x\";\nstale\nend\n",
			chunks:    []*patch.Chunk{chunk(nil, false, `-const a = "x";`, "-old", "+const a = “x”;", "+new", " end")},
			errPrefix: notFoundMsg("const a = \"x\";\nold\nend", "")},
		{name: "R11 stale removed line refused: a removed line must agree with the one it removes", file: "top\nA\nB-stale\nC\nD\nE\nbottom\n",
			chunks:    []*patch.Chunk{chunk(ctx("top"), false, " A", "-B", "-C", "-D", "-E", "+B", "+C", "+D", "+X")},
			errPrefix: notFoundMsg("A\nB\nC\nD\nE", "\nClosest region: lines 2-6 (4 of 5 lines agree); first difference at line 3:\n  file:  B-stale\n  patch: B")},
		{name: "R11 variant stale context line rescued by LCS", file: "top\nA\nB-stale\nC\nD\nE\nbottom\n",
			chunks: []*patch.Chunk{chunk(ctx("top"), false, " A", " B", "-C", "-D", "-E", "+C2", "+X")},
			want:   "top\nA\nB-stale\nC2\nX\nbottom", strategies: []string{"lcs"},
			check: func(t *testing.T, pls []*Placement) {
				wantPlaced(" A", " B-stale", "-C", "-D", "-E", "+C2", "+X")(t, pls)
				if pls[0].Score != 4 || pls[0].Needed != 4 || !pls[0].ShapeChanged {
					t.Fatalf("score %d needed %d shape %v", pls[0].Score, pls[0].Needed, pls[0].ShapeChanged)
				}
			}},
		{name: "LCS: a changed place next to a look-alike is ambiguous",
			file:   lcsLookAlike,
			chunks: []*patch.Chunk{chunk(nil, false, lcsLookAlikeBody...)},
			cands:  []int{4, 11}, errPrefix: pfx + "LCS rescue was ambiguous"},
		{name: "LCS: the look-alike alone is rescued",
			file:       lcsLookAlike[strings.Index(lcsLookAlike, "case B"):],
			chunks:     []*patch.Chunk{chunk(nil, false, lcsLookAlikeBody...)},
			strategies: []string{"lcs"}, starts: []int{3},
			want: "case B:\n\tsa, err := parseB(b)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tsas[i] = sa\n\tx := 1\ndefault:\n\tsa, l, err := parseC(b)\n\tif err != nil {"},
		{name: "R12 LCS respects the start", file: r12, cursor: 5,
			chunks: []*patch.Chunk{chunk(nil, false, " left", " old", "-keep", "+KEEP", " right")},
			want:   strings.TrimSuffix(strings.Replace(r12, "stale-old\nkeep", "stale-old\nKEEP", 1), "\n"),
			starts: []int{7}, strategies: []string{"lcs"}, cands: []int{8}},
		{name: "R12 variant from the top both windows qualify", file: r12,
			chunks:  []*patch.Chunk{chunk(nil, false, " left", " old", "-keep", "+KEEP", " right")},
			wantErr: pfx + "LCS rescue was ambiguous in " + testAbs + ":\nleft\nold\nkeep\nright\nCandidates at lines 2, 8" + hint},
		{name: "R12 stale removed line refused", file: r12, cursor: 5,
			chunks:    []*patch.Chunk{chunk(nil, false, " left", "-old", "+new", " keep", " right")},
			errPrefix: notFoundMsg("left\nold\nkeep\nright", "")},
		{name: "R13 duplicate pair refused", file: "head\nalpha\nbeta\nmid\nalpha\nbeta\ntail\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-alpha", "-beta", "+ALPHA", "+BETA")},
			cands:  []int{2, 5}, errPrefix: pfx + "Expected lines match more than one place"},
		{name: "R14 one matching edge only", file: "a\na\na\na\nb\nc\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " a", " b", " c", "-d", "+D")},
			errPrefix: notFoundMsg("a\nb\nc\nd", "")},
		{name: "R16 pruned by the bound", file: "left\nnoise-a\nkeep\nnoise-b\nright\n",
			chunks:    []*patch.Chunk{chunk(nil, false, " left", " old-a", " old-b", "-old-c", "+x", " right")},
			errPrefix: notFoundMsg("left\nold-a\nold-b\nold-c\nright", "")},
		{name: "R17 m=3 needs all", file: "h\na\nb-stale\nc\nt\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-a", " b", "-c", "+A", "+C")},
			errPrefix: notFoundMsg("a\nb\nc", "")},
		{name: "R17 m=4 with a stale removed line refused", file: "h\na\nb-stale\nc\nd\nt\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-a", "-b", "-c", "-d", "+A", "+B", "+C", "+D")},
			errPrefix: notFoundMsg("a\nb\nc\nd", "")},
		{name: "R17 variant m=4 stale context rescued", file: "h\na\nb-stale\nc\nd\nt\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-a", "+A", " b", "-c", "-d", "+C", "+D")},
			want:   "h\nA\nb-stale\nC\nD\nt", strategies: []string{"lcs"},
			check: wantPlaced("-a", "+A", " b-stale", "-c", "-d", "+C", "+D")},
		{name: "R18 indentation drift inside", file: "h\na\n    b\nc\nd\nt\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-a", "+A", " b", "-c", "+C", " d")},
			want:   "h\nA\n    b\nC\nd\nt", strategies: []string{"lcs"}},
		{name: "R18 removed line with indentation drift", file: "h\na\n    b\nc\nd\nt\n",
			chunks: []*patch.Chunk{chunk(nil, false, "-a", "-b", "-c", "-d", "+A", "+B", "+C", "+D")},
			want:   "h\nA\nB\nC\nD\nt", strategies: []string{"lcs"}},
	})
}

// TestPlaceLCSBounds covers the LCS rescue's bounds: a chunk of at most
// MaxLCSChunkLines (48) old lines, and at most MaxLCSCandidates (64) framed
// windows before the score prunes them.
func TestPlaceLCSBounds(t *testing.T) {
	mk := func(m int) (string, *patch.Chunk) {
		var file, ls []string
		for i := 0; i < m; i++ {
			l := "l" + itoa(i)
			file = append(file, l)
			switch {
			case i == 20:
				file[i] = "stale" // a stale context line
				ls = append(ls, " "+l)
			case i == m-1:
				ls = append(ls, "-"+l, "+X")
			default:
				ls = append(ls, " "+l)
			}
		}
		return strings.Join(file, "\n") + "\n", chunk(nil, false, ls...)
	}
	f48, c48 := mk(48)
	f49, c49 := mk(49)
	var r19, r19v []string
	for i := 0; i < 64; i++ {
		r19 = append(r19, "a", "x"+itoa(i), "y", "b")
	}
	r19 = append(r19, "a", "q-stale", "y", "b")
	for i := 0; i < 62; i++ {
		r19v = append(r19v, "a", "x"+itoa(i), "z", "b")
	}
	r19v = append(r19v, "a", "q-stale", "y", "b")
	r19body := []string{" a", " q", "-y", "+Y", " b"}
	runPlaceCases(t, []placeCase{
		{name: "R15 48 lines rescued", file: f48, chunks: []*patch.Chunk{c48}, strategies: []string{"lcs"},
			want: strings.TrimSuffix(f48, "\nl47\n") + "\nX"},
		{name: "R15 49 lines refused", file: f49, chunks: []*patch.Chunk{c49}, errPrefix: notFoundMsg(strings.TrimSuffix(strings.Replace(f49, "stale", "l20", 1), "\n"), "")},
		{name: "R19 65 candidates refused", file: strings.Join(r19, "\n"), chunks: []*patch.Chunk{chunk(nil, false, r19body...)},
			errPrefix: notFoundMsg("a\nq\ny\nb", "")},
		{name: "R19 variant 63 candidates, 62 pruned", file: strings.Join(r19v, "\n"), chunks: []*patch.Chunk{chunk(nil, false, r19body...)},
			strategies: []string{"lcs"}, starts: []int{62 * 4},
			want: strings.Join(append(append([]string(nil), r19v[:len(r19v)-2]...), "Y", "b"), "\n")},
	})
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// TestPlaceInsertions covers chunks without old lines: after an @@ anchor
// that must be found exactly once (tolerantly, from the cursor), at the end
// with "*** End of File", anywhere in an empty file, and refused with a hint
// when none of these says where.
func TestPlaceInsertions(t *testing.T) {
	missing := pfx + "Missing insertion anchor in " + testAbs + `: add "*** End of File" after the added lines to append them, or begin the chunk with "@@ <an existing line>" to insert after that line`
	runPlaceCases(t, []placeCase{
		{name: "I01 anchor in the middle", file: "top\nanchor\nbottom\n",
			chunks: []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			want:   "top\nanchor\nmiddle\nbottom", strategies: []string{"anchor"}, starts: []int{2}, cands: []int{2},
			check: func(t *testing.T, pls []*Placement) {
				if pls[0].End != 2 || pls[0].Cursor != 2 || !reflect.DeepEqual(pls[0].Contexts, []int{1}) {
					t.Fatalf("placement %+v", pls[0])
				}
			}},
		{name: "I02 anchor is the last line", file: "top\nanchor\n",
			chunks: []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			want:   "top\nanchor\nmiddle", strategies: []string{"anchor"}, starts: []int{2}},
		{name: "I03 tolerant anchor", file: "top\n“anchor”\n",
			chunks: []*patch.Chunk{chunk(ctx(`"anchor"`), false, "+middle")},
			want:   "top\n“anchor”\nmiddle", strategies: []string{"anchor"}},
		{name: "I04 trim-end anchor in the middle", file: "top\nanchor  \nbottom\n",
			chunks: []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			want:   "top\nanchor  \nmiddle\nbottom", starts: []int{2}},
		{name: "I05 missing anchor", file: "top\nbottom\n",
			chunks:  []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			wantErr: pfx + "Failed to find insertion anchor in " + testAbs + ":\nanchor"},
		{name: "I05 anchor before the cursor is not found", file: "anchor\ntop\nbottom\n", cursor: 1,
			chunks:  []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			wantErr: pfx + "Failed to find insertion anchor in " + testAbs + ":\nanchor"},
		{name: "I06 ambiguous anchor", file: "top\nanchor\none\nsplit\nanchor\ntwo\n",
			chunks:  []*patch.Chunk{chunk(ctx("anchor"), false, "+middle")},
			wantErr: pfx + "Insertion anchor was ambiguous in " + testAbs + ":\nanchor\nCandidates at lines 2, 5" + hint,
			cands:   []int{2, 5}},
		{name: "I07 tolerant ambiguous anchor", file: "top\n“anchor”\n\"anchor\"\n",
			chunks: []*patch.Chunk{chunk(ctx(`"anchor"`), false, "+middle")},
			cands:  []int{2, 3}, errPrefix: pfx + "Insertion anchor was ambiguous"},
		{name: "I08 no anchor, no end marker", file: "line1\nline2\n",
			chunks:  []*patch.Chunk{chunk(nil, false, "+added line 1", "+added line 2")},
			wantErr: missing},
		{name: "I08 variant empty file accepts it", file: "",
			chunks: []*patch.Chunk{chunk(nil, false, "+First line")},
			want:   "First line", strategies: []string{"eof-insert"}},
		{name: "I09 EOF insertion", file: "line1\nline2\n",
			chunks: []*patch.Chunk{chunk(nil, true, "+added")},
			want:   "line1\nline2\nadded", strategies: []string{"eof-insert"}, starts: []int{2}, eofKept: []bool{true}},
		{name: "I10 EOF insertion ignores its context", file: "top\nmid\n",
			chunks: []*patch.Chunk{chunk(ctx("top"), true, "+z")},
			want:   "top\nmid\nz", strategies: []string{"eof-insert"}},
		{name: "I11 changed removed line in an End of File chunk refused", file: "alpha\nstale\nomega",
			chunks:    []*patch.Chunk{chunk(nil, true, "-alpha", "-old", "-omega", "+alpha", "+new", "+omega")},
			errPrefix: notFoundMsg("alpha\nold\nomega", "")},
		{name: "I11 variant EOF kept", file: "alpha\n  old\nomega",
			chunks: []*patch.Chunk{chunk(nil, true, " alpha", "-old", "+new", " omega")},
			want:   "alpha\nnew\nomega", strategies: []string{"prefix-suffix"}, eofKept: []bool{true}},
		{name: "I12 variant EOF dropped", file: "top\nprefix\n  old\nsuffix\nbottom\n",
			chunks: []*patch.Chunk{chunk(nil, true, " prefix", "-old", "+new", " suffix")},
			want:   "top\nprefix\nnew\nsuffix\nbottom", strategies: []string{"prefix-suffix"}, eofKept: []bool{false}},
		{name: "I18 insertion then edit of the next line", file: "a\nb\nc\n",
			chunks: []*patch.Chunk{chunk(ctx("a"), false, "+X"), chunk(nil, false, "-b", "+B")},
			want:   "a\nX\nB\nc", starts: []int{1, 1}, strategies: []string{"anchor", "exact"}},
		{name: "I20 empty anchored chunk then edit", file: "a\nb\nc\n",
			chunks: []*patch.Chunk{chunk(ctx("a"), false), chunk(nil, false, "-b", "+B")},
			want:   "a\nB\nc", starts: []int{1, 1}},
		{name: "stacked anchor: outer narrows, inner is unique after it", file: "class A:\n  def f():\nclass B:\n  def f():\n",
			chunks: []*patch.Chunk{chunk(ctx("class B:", "  def f():"), false, "+    pass")},
			want:   "class A:\n  def f():\nclass B:\n  def f():\n    pass", starts: []int{4}},
		{name: "stacked anchor: outer missing is an error", file: "class A:\n  def f():\n",
			chunks:  []*patch.Chunk{chunk(ctx("class B:", "  def f():"), false, "+    pass")},
			wantErr: pfx + "Failed to find insertion anchor in " + testAbs + ":\nclass B:"},
	})
}

func TestIsUnifiedDiffHeader(t *testing.T) {
	for s, want := range map[string]bool{
		"-1,3 +1,3 @@":         true,
		"@@ -1,3 +1,3 @@":      true,
		"-1 +1 @@ func main()": true,
		"-12,0 +13,2":          true,
		"func main()":          false,
		"-1,3 1,3 @@":          false,
		"- +1 @@":              false,
		"-1,3 +1,3 foo":        false,
	} {
		if got := isUnifiedDiffHeader(s); got != want {
			t.Errorf("isUnifiedDiffHeader(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestLCSDirectTie calls the LCS step directly on a chunk whose old lines
// occur twice: both windows qualify, so the tie stays ambiguous there.
func TestLCSDirectTie(t *testing.T) {
	v := NewFileView([]string{"head", "alpha", "beta", "mid", "alpha", "beta", "tail"}, false)
	c := chunk(nil, false, "-alpha", "-beta", "+ALPHA", "+BETA")
	got, _, _ := v.lcsWindows(c.Lines, 0)
	if len(got) != 2 || got[0].start != 1 || got[1].start != 4 {
		t.Fatalf("lcs windows %+v, want starts 1 and 4", got)
	}
}

func TestDropTrailingEmpty(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-alpha", "-", "+omega", "+"}, []string{"-alpha", "+omega"}},
		{[]string{" a", "-b", "+B", " "}, []string{" a", "-b", "+B"}},
		{[]string{" a", " ", "+x"}, []string{" a", "+", "+x"}},
		{[]string{" x", " ", "-"}, []string{" x", "-"}},
		{[]string{" x", " ", " "}, []string{" x", " "}},
		{[]string{"-", "+x"}, []string{"+x"}},
	} {
		var got []string
		for _, l := range dropTrailingEmpty(body(tc.in...)) {
			got = append(got, string(rune(l.Op))+l.Text)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("dropTrailingEmpty(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

const lcsLookAlike = "case A:\n\tsa, err := parseA(b)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tsas[i] = sa\n\trewritten(1)\n" +
	"case B:\n\tsa, err := parseB(b)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tsas[i] = sa\n\tb = b[align:]\n" +
	"default:\n\tsa, l, err := parseC(b)\n\tif err != nil {\n"

// lcsLookAlikeBody was written against case A before its last line was
// rewritten; case B looks like it.
var lcsLookAlikeBody = []string{" \t\treturn nil, err", " \t}", " \tsas[i] = sa", "-\tb = b[align:]", "+\tx := 1", " case B:", " \tsa, err := parseB(b)", " \tif err != nil {"}

// TestPrefixSuffixPairBudget: when the pair budget runs out after one
// accepted region, that region is not known to be unique, so the rescue is
// refused rather than applied. (Here the adjacent "L", "R" pairs are also
// refused places framed by the anchors, which alone would refuse it.)
func TestPrefixSuffixPairBudget(t *testing.T) {
	lines := []string{"L", "  x", "R"}
	for i := 0; i < 3000; i++ {
		lines = append(lines, "L", "R")
	}
	v := NewFileView(lines, false)
	c := chunk(nil, false, " L", "-x", "+y", " R")
	cands, complete, _ := v.prefixSuffix(c.Lines, 0)
	if complete || len(cands) != 1 || cands[0].start != 0 {
		t.Fatalf("cands %+v complete %v", cands, complete)
	}
	_, err := v.Place(c, 0, testAbs)
	if err == nil {
		t.Fatal("placed although uniqueness was not established")
	}
	_, me := asVerification(t, err)
	if me.Phase != PhasePrefixSuffix || len(me.Candidates) == 0 || me.Candidates[0] != 1 {
		t.Fatalf("phase %s candidates %v", me.Phase, me.Candidates)
	}
	// With the look-alike pairs out of reach of the window, it applies.
	v2 := NewFileView(lines[:3], false)
	pl, err := v2.Place(c, 0, testAbs)
	if err != nil || pl.Strategy != StrategyPrefixSuffix {
		t.Fatalf("placement %+v err %v", pl, err)
	}
}
