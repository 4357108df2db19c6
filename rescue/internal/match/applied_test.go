package match

import (
	"testing"

	"github.com/slimgate/slim/rescue/internal/patch"
)

// TestPlaceAlreadyAppliedRules pins the rules of the already-applied step
// that decide which chunks whose change is made are taken as made, and
// which look-alikes and edges still refuse them. Each accepted case is
// paired with the nearest case that must stay refused.
func TestPlaceAlreadyAppliedRules(t *testing.T) {
	// A deletion already made at the first block; the second block has
	// the chunk's context around other lines.
	const made = "func a() {\n\tif !ok {\n\t\tfail()\n\t}\n\tnext()\n\tmore()\n\tlast()\n}\n"
	deletion := chunk(nil, false, " \tif !ok {", " \t\tfail()", " \t}", "-\tremoved1()", "-\tremoved2()", " \tnext()", " \tmore()", " \tlast()")
	// Two functions with the same label; the chunks' change is made in
	// the first, after the label the first chunk already passed.
	const labels = "func a() {\nLoop:\n\tfor {\n\t\tx()\n\t\tNEW1()\n\t\ty()\n\t}\n\tp()\n\tp2()\n\tNEW2()\n\tq()\n\tr()\n}\nfunc b() {\nLoop:\n\tfor {\n\t}\n}\n"
	first := chunk(ctx("Loop:"), false, " \tfor {", " \t\tx()", "-\t\told1()", "+\t\tNEW1()", " \t\ty()", " \t}")
	second := chunk(ctx("Loop:"), false, " \tp()", " \tp2()", "-\told2()", "+\tNEW2()", " \tq()", " \tr()")
	runPlaceCases(t, []placeCase{
		{name: "a look-alike framed at another indentation does not stop a change made at the author's",
			// The second block would be the place meant only if someone
			// had re-indented it and rewritten the removed lines at once.
			file:       made + "func b() {\n\tfor {\n\t\tif !ok {\n\t\t\tfail()\n\t\t}\n\t\tother()\n\t\tnext()\n\t\tmore()\n\t\tlast()\n\t}\n}\n",
			chunks:     []*patch.Chunk{deletion},
			strategies: []string{StrategyAlreadyApplied},
			want:       "func a() {\n\tif !ok {\n\t\tfail()\n\t}\n\tnext()\n\tmore()\n\tlast()\n}\nfunc b() {\n\tfor {\n\t\tif !ok {\n\t\t\tfail()\n\t\t}\n\t\tother()\n\t\tnext()\n\t\tmore()\n\t\tlast()\n\t}\n}"},
		{name: "a look-alike framed at the author's indentation still refuses a change that looks made",
			// The second block may be the place meant, its removed lines
			// rewritten since: the change is not known to be made.
			file:      made + "func b() {\n\tif !ok {\n\t\tfail()\n\t}\n\tother()\n\tnext()\n\tmore()\n\tlast()\n}\n",
			chunks:    []*patch.Chunk{deletion},
			errPrefix: pfx + "The change looks already made"},
		{name: "a deletion of the file's first lines made, one non-blank new line pinned by the file's start",
			file:       "\nimport \"syscall\"\n\nfunc f() {}\n",
			chunks:     []*patch.Chunk{chunk(nil, false, "-// Copyright.", "-", "-package unix", " ", " import \"syscall\"", " ")},
			strategies: []string{StrategyAlreadyApplied},
			want:       "\nimport \"syscall\"\n\nfunc f() {}"},
		{name: "one non-blank new line at the file's start that stands elsewhere too is not taken as made",
			// The second copy may be the place meant, its removed line
			// rewritten since.
			file:      "\nimport \"syscall\"\n\nfunc f() {}\npackage other\n\nimport \"syscall\"\n\n",
			chunks:    []*patch.Chunk{chunk(nil, false, "-package unix", " ", " import \"syscall\"", " ")},
			errPrefix: pfx + "Failed to find expected lines"},
		{name: "a change made before the @@ line's next match is found from the cursor, the @@ line dropped",
			file:       labels,
			chunks:     []*patch.Chunk{first, second},
			strategies: []string{StrategyAlreadyApplied, StrategyAlreadyApplied},
			want:       labels[:len(labels)-1],
			check: func(t *testing.T, pls []*Placement) {
				if pls[1].Start != 7 || pls[1].Contexts[0] != -1 {
					t.Errorf("second chunk at %d with @@ line at %d, want 7 and dropped", pls[1].Start, pls[1].Contexts[0])
				}
			}},
		{name: "a change made nowhere before the @@ line's next match is still not found",
			file:      labels,
			chunks:    []*patch.Chunk{first, chunk(ctx("Loop:"), false, " \tp()", " \tp2()", "-\told2()", "+\tOTHER()", " \tq()", " \tr()")},
			errPrefix: pfx + "Failed to find expected lines"},
	})
}
