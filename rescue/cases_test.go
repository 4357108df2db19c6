package rescue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/rescue/internal/hostmodel"
	"github.com/slimgate/slim/rescue/internal/patch"
)

// specCase is one behaviour case of the whole engine, named after what it
// pins (a leading ID such as M03 names the same behaviour in the matcher's
// unit tests, where it has one). Each case runs twice on fresh copies of
// the files:
// in rewrite mode (the patch handed on, which the host model must turn into
// the expected files) and in apply mode (the files slim writes).
type specCase struct {
	name  string
	files map[string]string
	patch string // wrapped in Begin/End unless raw
	raw   bool
	// Rewrite mode.
	decision string   // expected decision ("" = don't care unless err)
	errKind  Kind     // expected error kind in both modes
	errSub   string   // substring of the error message (<root> is replaced)
	repairs  []string // repair kinds that must be reported
	outSub   []string // substrings of the handed-on patch
	// rewriteErr: rewrite mode refuses (host check) while apply works.
	rewriteErr string
	// Apply mode: expected files afterwards (absent: "\x00").
	want map[string]string
}

const absent = "\x00"

func TestSpecCases(t *testing.T) {
	for _, c := range specCases() {
		t.Run(c.name, func(t *testing.T) { runSpecCase(t, c) })
	}
}

func runSpecCase(t *testing.T, c specCase) {
	patch := c.patch
	if !c.raw {
		patch = wrap(patch)
	}
	// Rewrite mode.
	e := newEnv(t, c.files)
	patchR := strings.ReplaceAll(patch, "<root>", e.dir)
	res, err := e.process(patchR, false)
	wantKind, wantSub := c.errKind, c.errSub
	if c.rewriteErr != "" {
		wantKind, wantSub = Verification, c.rewriteErr
	}
	checkErr(t, "rewrite", err, wantKind, strings.ReplaceAll(wantSub, "<root>", e.dir))
	if res == nil {
		t.Fatal("nil result")
	}
	for name, content := range c.files {
		if got, _ := e.read(name); got != content {
			t.Errorf("rewrite mode changed %s", name)
		}
	}
	if err == nil {
		if c.decision != "" && res.Decision != c.decision {
			t.Errorf("decision %s, want %s (repairs %v)", res.Decision, c.decision, res.Repairs)
		}
		if res.Decision == DecisionUnchanged && *res.PatchText != patchR {
			t.Errorf("unchanged but text differs")
		}
		for _, k := range c.repairs {
			if !hasRepair(res.Repairs, k) {
				t.Errorf("repair %s missing in %v", k, res.Repairs)
			}
		}
		for _, s := range c.outSub {
			if !strings.Contains(*res.PatchText, strings.ReplaceAll(s, "<root>", e.dir)) {
				t.Errorf("handed-on patch lacks %q:\n%s", s, *res.PatchText)
			}
		}
		if !res.NativeCheck.OK {
			t.Errorf("native check not ok")
		}
		// Idempotence: the patch slim hands on needs nothing more.
		if res.Decision == DecisionRewrite {
			again, err := e.process(*res.PatchText, false)
			if err != nil || again.Decision != DecisionUnchanged {
				t.Errorf("handed-on patch is not final: %v %v %v\n%s", err, again.Decision, again.Repairs, *res.PatchText)
			}
		}
		// Independent check: the host model on the handed-on patch, reading
		// the real files, gives the expected files.
		if c.want != nil {
			hr, herr := hostmodel.Apply(*res.PatchText, e.dir, 0, func(abs string) hostmodel.File {
				fi, err := os.Stat(abs)
				if err != nil {
					return hostmodel.File{}
				}
				if fi.IsDir() {
					return hostmodel.File{Exists: true, Dir: true}
				}
				b, _ := os.ReadFile(abs)
				return hostmodel.File{Data: b, Exists: true}
			}, nil)
			if herr != nil {
				t.Fatalf("host model fails on the handed-on patch: %v\n%s", herr, *res.PatchText)
			}
			for name, want := range c.want {
				abs := filepath.Join(e.dir, name)
				got, ok := hr.Finals[abs]
				if !ok {
					b, err := os.ReadFile(abs)
					if err == nil {
						got = b
					}
				}
				if want == absent {
					if got != nil {
						t.Errorf("host: %s exists, want absent", name)
					}
				} else if string(got) != want {
					t.Errorf("host: %s = %q, want %q\npatch:\n%s", name, got, want, *res.PatchText)
				}
			}
		}
	}

	// Apply mode.
	e = newEnv(t, c.files)
	patchA := strings.ReplaceAll(patch, "<root>", e.dir)
	_, err = e.process(patchA, true)
	checkErr(t, "apply", err, c.errKind, strings.ReplaceAll(c.errSub, "<root>", e.dir))
	if err != nil {
		for name, content := range c.files {
			if got, _ := e.read(name); got != content {
				t.Errorf("refused apply changed %s", name)
			}
		}
		return
	}
	for name, want := range c.want {
		got, ok := e.read(name)
		if want == absent {
			if ok {
				t.Errorf("apply: %s exists, want absent", name)
			}
			continue
		}
		if !ok || got != want {
			t.Errorf("apply: %s = %q (exists %v), want %q", name, got, ok, want)
		}
	}
}

func checkErr(t *testing.T, mode string, err error, kind Kind, sub string) {
	t.Helper()
	if kind == "" {
		if err != nil {
			t.Fatalf("%s: unexpected error: %v", mode, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s: no error, want %s %q", mode, kind, sub)
	}
	if got := kindOf(err); got != kind {
		t.Fatalf("%s: error kind %s, want %s: %v", mode, got, kind, err)
	}
	if !strings.Contains(err.Error(), sub) {
		t.Fatalf("%s: error %q lacks %q", mode, err.Error(), sub)
	}
}

func hasRepair(rs []Repair, kind string) bool {
	for _, r := range rs {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

func specCases() []specCase {
	abc := map[string]string{"a.txt": "a\nb\nc\n"}
	upd := "*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n"
	aBc := map[string]string{"a.txt": "a\nB\nc\n"}
	V, X := Validation, Verification
	return []specCase{
		// Envelope and parsing.
		{name: "P01 exact update handed on unchanged", files: abc, patch: upd, decision: DecisionUnchanged, want: aBc},
		{name: "P02 blank lines after End Patch are harmless", files: abc, raw: true, patch: wrap(upd) + "\n\n", decision: DecisionUnchanged, want: aBc},
		{name: "P02 End Patch without a final newline", files: abc, raw: true, patch: strings.TrimSuffix(wrap(upd), "\n"), decision: DecisionUnchanged, want: aBc},
		{name: "P03 cat heredoc around the patch removed", files: abc, raw: true, patch: "cat <<'PATCH'\n" + wrap(upd) + "PATCH\n", decision: DecisionRewrite, repairs: []string{patch.RepairHeredoc}, want: aBc},
		{name: "P03 heredoc around a patch with CRLF line ends", files: abc, raw: true, patch: strings.ReplaceAll("cat <<'PATCH'\n"+wrap(upd)+"PATCH\n", "\n", "\r\n"), decision: DecisionRewrite, repairs: []string{patch.RepairHeredoc, patch.RepairPatchEOL}, want: aBc},
		{name: "P04 bare heredoc with mismatched quotes removed", files: abc, raw: true, patch: "<<\"EOF'\n" + wrap(upd) + "EOF", decision: DecisionRewrite, repairs: []string{patch.RepairHeredoc}, want: aBc},
		{name: "P05 apply_patch heredoc line removed", files: abc, raw: true, patch: "apply_patch <<'EOF'\n" + wrap(upd) + "EOF\n", decision: DecisionRewrite, repairs: []string{patch.RepairApplyPatchPrefix}, want: aBc},
		{name: "P06 code fence around the patch removed", files: abc, raw: true, patch: "```\n" + wrap(upd) + "```\n", decision: DecisionRewrite, repairs: []string{patch.RepairCodeFence}, want: aBc},
		{name: "P07 text after End Patch refused", files: abc, raw: true, patch: wrap(upd) + "garbage\n", errKind: V, errSub: "apply_patch validation failed: Invalid patch format: unexpected line after End Patch: garbage"},
		{name: "P08 padded Begin and End markers on the first and last lines handed on unchanged", files: map[string]string{"f.txt": "one\n"}, raw: true, patch: " *** Begin Patch\n*** Update File: f.txt\n@@\n-one\n+two\n*** End Patch \n", decision: DecisionUnchanged, want: map[string]string{"f.txt": "two\n"}},
		{name: "P09 End marker with leading whitespace repaired", files: map[string]string{"f.txt": "one\n"}, raw: true, patch: "*** Begin Patch \n*** Update File: f.txt\n@@\n-one\n+two\n *** End Patch\n", decision: DecisionRewrite, repairs: []string{patch.RepairPaddedMarker}, want: map[string]string{"f.txt": "two\n"}},
		{name: "P11 padded hunk header repaired", files: map[string]string{"foo.txt": "x\n"}, patch: "  *** Update File: foo.txt\n@@\n-x\n+y\n", decision: DecisionRewrite, repairs: []string{patch.RepairPaddedHeader}, outSub: []string{"\n*** Update File: foo.txt\n"}, want: map[string]string{"foo.txt": "y\n"}},
		{name: "P12 unknown hunk header refused", files: abc, patch: "*** Frobnicate File: foo\n", errKind: V, errSub: "unexpected line between hunks: *** Frobnicate File: foo"},
		{name: "P13 body line after Delete File refused", files: abc, patch: "*** Delete File: a.txt\n+ghost\n", errKind: V, errSub: "unexpected line between hunks: +ghost"},
		{name: "P14 Update File without a chunk refused", files: abc, patch: "*** Update File: a.txt\n", errKind: V, errSub: "Invalid patch format: Update File is missing @@ chunk body: a.txt"},
		{name: "P15 junk line inside a chunk refused", files: abc, patch: "*** Update File: a.txt\n@@\n a\ngarbage\n-b\n+B\n", errKind: V, errSub: "unexpected line in patch chunk: garbage"},
		{name: "P16 junk line inside an Add body refused", files: abc, patch: "*** Add File: n.txt\n+fresh\ngarbage\n", errKind: V, errSub: "unexpected line in Add File body: garbage"},
		{name: "P17 empty line inside a chunk read as an empty context line", files: map[string]string{"a.txt": "a\n\nb\n"}, patch: "*** Update File: a.txt\n@@\n a\n\n-b\n+B\n", decision: DecisionRewrite, repairs: []string{patch.RepairBlankContextLine}, outSub: []string{"\n a\n \n-b\n+B\n"}, want: map[string]string{"a.txt": "a\n\nB\n"}},
		{name: "P18 missing first @@ supplied", files: map[string]string{"f.py": "import foo\n"}, patch: "*** Update File: f.py\n import foo\n+bar\n", decision: DecisionRewrite, repairs: []string{patch.RepairMissingChunkHead}, outSub: []string{"@@\n import foo\n+bar\n"}, want: map[string]string{"f.py": "import foo\nbar\n"}},
		{name: "P19 padded End of File marker repaired", files: map[string]string{"a.txt": "a\nb\n"}, patch: "*** Update File: a.txt\n@@\n a\n-b\n+B\n*** End of File \n", decision: DecisionRewrite, repairs: []string{patch.RepairPaddedMarker}, want: map[string]string{"a.txt": "a\nB\n"}},
		{name: "P20 empty patch refused", files: abc, raw: true, patch: "*** Begin Patch\n*** End Patch\n", errKind: V, errSub: "apply_patch validation failed: empty patch"},
		{name: "P20 patch of blank lines has no hunks", files: abc, raw: true, patch: "*** Begin Patch\n\n*** End Patch\n", errKind: V, errSub: "no hunks found"},
		{name: "P21 hunk header without a space after the colon accepted", files: nil, patch: "*** Add File:e.txt\n+a\n", decision: DecisionUnchanged, want: map[string]string{"e.txt": "a\n"}},
		{name: "P22 Move to without a path refused", files: abc, patch: "*** Update File: a.txt\n*** Move to:\n@@\n-b\n+B\n", errKind: V, errSub: "unexpected line between hunks: *** Update File: a.txt"},
		{name: "P23 @@ text without a space accepted", files: map[string]string{"a.txt": "ctx\nb\n"}, patch: "*** Update File: a.txt\n@@ctx\n-b\n+B\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": "ctx\nB\n"}},
		{name: "P24 @@ text keeps its indentation after the one separating space", files: map[string]string{"a.py": "x\n  def f():\n    return 1\n"}, patch: "*** Update File: a.py\n@@   def f():\n-    return 1\n+    return 2\n", decision: DecisionUnchanged, want: map[string]string{"a.py": "x\n  def f():\n    return 2\n"}},
		{name: "P25 unified-diff @@ range dropped", files: abc, patch: "*** Update File: a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", decision: DecisionRewrite, repairs: []string{patch.RepairUnifiedDiffHeader}, want: aBc},
		{name: "missing Begin and End markers refused", files: abc, raw: true, patch: "*** Update File: a.txt\n", errKind: V, errSub: "Invalid patch format: missing Begin/End markers"},
		{name: "text before Begin Patch refused", files: abc, raw: true, patch: "hello\n" + wrap(upd), errKind: V, errSub: "unexpected line before Begin Patch: hello"},
		{name: "junk line before the first chunk refused", files: abc, patch: "*** Update File: a.txt\njunk\n", errKind: V, errSub: "unexpected line in update body: junk"},

		// Paths and containment.
		{name: "G01 absolute Update path inside the root written relative", files: map[string]string{"sample.txt": "alpha\nbeta\n"}, patch: "*** Update File: <root>/sample.txt\n@@\n-alpha\n+omega\n", decision: DecisionRewrite, repairs: []string{patch.RepairAbsolutePath}, outSub: []string{"*** Update File: sample.txt\n"}, want: map[string]string{"sample.txt": "omega\nbeta\n"}},
		{name: "G02 absolute Add path inside the root written relative", patch: "*** Add File: <root>/added.txt\n+fresh\n", decision: DecisionRewrite, outSub: []string{"*** Add File: added.txt\n+fresh\n"}, want: map[string]string{"added.txt": "fresh\n"}},
		{name: "G03 absolute Move destination written relative", files: map[string]string{"before.txt": "alpha\nbeta\n"}, patch: "*** Update File: before.txt\n*** Move to: <root>/nested/after.txt\n@@\n alpha\n-beta\n+BETA\n", decision: DecisionRewrite, outSub: []string{"*** Move to: nested/after.txt\n"}, want: map[string]string{"before.txt": absent, "nested/after.txt": "alpha\nBETA\n"}},
		{name: "G05 Add onto the root directory itself refused", patch: "*** Add File: <root>\n+x\n", errKind: X, errSub: "Add File target already exists: <root>"},
		{name: "G06 absolute path that climbs out of the root blocked", patch: "*** Add File: <root>/../outside.txt\n+x\n", errKind: Blocked, errSub: "apply_patch blocked: "},
		{name: "G07 relative path that climbs out of the root blocked", patch: "*** Add File: ../outside-added.txt\n+x\n", errKind: Blocked, errSub: "apply_patch blocked: "},
		{name: "G10 one outside target blocks the whole patch", files: map[string]string{"in.txt": "stale\n"}, patch: "*** Add File: ../out.txt\n+x\n*** Update File: in.txt\n@@\n-stale\n+fresh\n*** Delete File: ../other.txt\n", errKind: Blocked, errSub: "apply_patch blocked: "},
		{name: "G12 file name starting with two dots is inside", files: map[string]string{"..cfg": "k=1\n"}, patch: "*** Update File: ..cfg\n@@\n-k=1\n+k=2\n", decision: DecisionUnchanged, want: map[string]string{"..cfg": "k=2\n"}},
		{name: "G14 path with dot segments cleaned", files: map[string]string{"d/a.txt": "x\n"}, patch: "*** Update File: ./d/../d/a.txt\n@@\n-x\n+y\n", decision: DecisionUnchanged, want: map[string]string{"d/a.txt": "y\n"}},

		// Matching, end to end.
		{name: "M03 curly quotes in the file, straight in the patch", files: map[string]string{"sample.txt": "const title = “Hola”;\n"}, patch: "*** Update File: sample.txt\n@@\n-const title = \"Hola\";\n+const title = \"Hola mundo\";\n", decision: DecisionRewrite, outSub: []string{"-const title = “Hola”;\n+const title = \"Hola mundo\";\n"}, want: map[string]string{"sample.txt": "const title = \"Hola mundo\";\n"}},
		{name: "M04 trailing spaces in the file", files: map[string]string{"sample.txt": "alpha  \n"}, patch: "*** Update File: sample.txt\n@@\n-alpha\n+omega\n", decision: DecisionRewrite, outSub: []string{"-alpha  \n+omega\n"}, want: map[string]string{"sample.txt": "omega\n"}},
		{name: "M05 leading spaces in the file refused", files: map[string]string{"sample.txt": "  alpha  \n"}, patch: "*** Update File: sample.txt\n@@\n-alpha\n+omega\n", errKind: X, errSub: "Failed to find expected lines in <root>/sample.txt:\nalpha"},
		{name: "M06 lost indentation refused", files: map[string]string{"c.yaml": "root:\n  child:\n    enabled: false\nnext: true\n"}, patch: "*** Update File: c.yaml\n@@\n-enabled: false\n+enabled: true\n", errKind: X, errSub: "Failed to find expected lines"},
		{name: "M08 no-break space and ellipsis folded", files: map[string]string{"a.txt": "wait\u00A0for it\u2026\nz\n"}, patch: "*** Update File: a.txt\n@@\n-wait for it...\n+done\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "done\nz\n"}},
		{name: "M09 minus sign folded", files: map[string]string{"a.txt": "x \u2212 y\n"}, patch: "*** Update File: a.txt\n@@\n-x - y\n+x + y\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "x + y\n"}},
		{name: "M12 block found twice refused with its candidates", files: map[string]string{"a.txt": "x\ny\nx\n"}, patch: "*** Update File: a.txt\n@@\n-x\n+X\n", errKind: X, errSub: "Candidates at lines 1, 3."},
		{name: "M13 curly context line in the patch keeps the file's bytes", files: map[string]string{"u.txt": "const a = \"x\";\nold\n"}, patch: "*** Update File: u.txt\n@@\n const a = “x”;\n-old\n+new\n", decision: DecisionRewrite, outSub: []string{" const a = \"x\";\n-old\n+new\n"}, want: map[string]string{"u.txt": "const a = \"x\";\nnew\n"}},
		{name: "M14 trimmed context line in the patch keeps the file's trailing spaces", files: map[string]string{"u.txt": "alpha  \nold\n"}, patch: "*** Update File: u.txt\n@@\n alpha\n-old\n+new\n", decision: DecisionRewrite, want: map[string]string{"u.txt": "alpha  \nnew\n"}},
		{name: "M15 @@ text found tolerantly with an exact body handed on unchanged", files: map[string]string{"u.txt": "“anchor”\nold\n"}, patch: "*** Update File: u.txt\n@@ \"anchor\"\n-old\n+new\n", decision: DecisionUnchanged, want: map[string]string{"u.txt": "“anchor”\nnew\n"}},

		// Rescues, end to end.
		{name: "R01 indentation drift rescued, added line kept verbatim", files: map[string]string{"sample.txt": "top\nprefix\n  old-value\nsuffix\nbottom\n"}, patch: "*** Update File: sample.txt\n@@ top\n prefix\n-old-value\n+ \tverbatim  \"\"  Ω  \n suffix\n", decision: DecisionRewrite, outSub: []string{"+ \tverbatim  \"\"  Ω  \n"}, want: map[string]string{"sample.txt": "top\nprefix\n \tverbatim  \"\"  Ω  \nsuffix\nbottom\n"}},
		{name: "R01 changed removed line refused", files: map[string]string{"sample.txt": "top\nprefix\nstale-value\nsuffix\nbottom\n"}, patch: "*** Update File: sample.txt\n@@ top\n prefix\n-old-value\n+new\n suffix\n", errKind: X, errSub: "Failed to find expected lines"},
		{name: "R09 insertion between context lines three lines apart refused", files: map[string]string{"a.txt": "A\nY1\nY2\nY3\nB\n"}, patch: "*** Update File: a.txt\n@@\n A\n+X\n B\n", errKind: X, errSub: "Failed to find expected lines"},
		{name: "R11 stale removed line refused", files: map[string]string{"sample.txt": "top\nA\nB-stale\nC\nD\nE\nbottom\n"}, patch: "*** Update File: sample.txt\n@@ top\n A\n-B\n-C\n-D\n-E\n+B\n+C\n+D\n+X\n", errKind: X, errSub: "Failed to find expected lines"},

		// Insertions, anchors, End of File.
		{name: "I01 insertion after an anchor inside the file", files: map[string]string{"a.txt": "top\nanchor\nbottom\n"}, patch: "*** Update File: a.txt\n@@ anchor\n+middle\n", decision: DecisionRewrite, outSub: []string{"@@ anchor\n+middle\n bottom\n"}, want: map[string]string{"a.txt": "top\nanchor\nmiddle\nbottom\n"}},
		{name: "I02 insertion after an anchor on the last line", files: map[string]string{"a.txt": "top\nanchor\n"}, patch: "*** Update File: a.txt\n@@ anchor\n+middle\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": "top\nanchor\nmiddle\n"}},
		{name: "I03 anchor found through curly quotes", files: map[string]string{"a.txt": "top\n“anchor”\n"}, patch: "*** Update File: a.txt\n@@ \"anchor\"\n+middle\n", decision: DecisionRewrite, outSub: []string{"@@ “anchor”\n"}, want: map[string]string{"a.txt": "top\n“anchor”\nmiddle\n"}},
		{name: "I05 missing anchor refused", files: map[string]string{"a.txt": "top\nbottom\n"}, patch: "*** Update File: a.txt\n@@ anchor\n+middle\n", errKind: X, errSub: "Failed to find insertion anchor in <root>/a.txt:\nanchor"},
		{name: "I06 anchor found twice refused", files: map[string]string{"a.txt": "top\nanchor\none\nsplit\nanchor\ntwo\n"}, patch: "*** Update File: a.txt\n@@ anchor\n+middle\n", errKind: X, errSub: "Candidates at lines 2, 5."},
		{name: "I08 insertion without an anchor or End of File refused", files: map[string]string{"a.txt": "line1\nline2\n"}, patch: "*** Update File: a.txt\n@@\n+added line 1\n+added line 2\n", errKind: X, errSub: "Missing insertion anchor in <root>/a.txt: add \"*** End of File\""},
		{name: "I09 End of File insertion appends", files: map[string]string{"a.txt": "line1\nline2\n"}, patch: "*** Update File: a.txt\n@@\n+added\n*** End of File\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": "line1\nline2\nadded\n"}},
		{name: "I10 End of File decides the place, not the @@ text", files: map[string]string{"a.txt": "top\nz0\n"}, patch: "*** Update File: a.txt\n@@ top\n+z\n*** End of File\n", want: map[string]string{"a.txt": "top\nz0\nz\n"}},
		{name: "I17 trailing empty context line retried without it", files: map[string]string{"a.txt": "alpha\nomega\n"}, patch: "*** Update File: a.txt\n@@\n-alpha\n \n", decision: DecisionRewrite, want: map[string]string{"a.txt": "omega\n"}},
		{name: "I18 insertion merged with the chunk that starts right after it", files: map[string]string{"a.txt": "a\nb\nc\n"}, patch: "*** Update File: a.txt\n@@ a\n+X\n@@\n-b\n+B\n", decision: DecisionRewrite, outSub: []string{"@@ a\n-b\n+X\n+B\n*** End Patch"}, want: map[string]string{"a.txt": "a\nX\nB\nc\n"}},
		{name: "I19 stacked @@ lines narrow to the second class", files: map[string]string{"a.py": "class Other:\n    def method():\n        old\nclass BaseClass:\n    def method():\n        old\n"}, patch: "*** Update File: a.py\n@@ class BaseClass:\n@@     def method():\n-        old\n+        new\n", decision: DecisionUnchanged, want: map[string]string{"a.py": "class Other:\n    def method():\n        old\nclass BaseClass:\n    def method():\n        new\n"}},
		{name: "I20 bare @@ after an @@ line continues the chunk", files: map[string]string{"a.txt": "a\nb\nc\n"}, patch: "*** Update File: a.txt\n@@ a\n@@\n-b\n+B\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": "a\nB\nc\n"}},
		{name: "I21 chunks out of order refused", files: map[string]string{"a.txt": "a\nb\nc\nd\n"}, patch: "*** Update File: a.txt\n@@\n-c\n+C\n@@\n-a\n+A\n", errKind: X, errSub: "Failed to find expected lines in <root>/a.txt:\na"},

		// Line ends, final newline, encoding.
		{name: "E01 CRLF file: the rendered lines carry the CR", files: map[string]string{"a.txt": "alpha\r\nbeta\r\ngamma\r\n"}, patch: "*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n", decision: DecisionRewrite, repairs: []string{patch.RepairHostEOL}, outSub: []string{" alpha\r\n-beta\r\n+BETA\r\n gamma\r\n"}, want: map[string]string{"a.txt": "alpha\r\nBETA\r\ngamma\r\n"}},
		{name: "E03 file without a final newline: applied, never handed on", files: map[string]string{"a.txt": "alpha\nbeta"}, patch: "*** Update File: a.txt\n@@\n alpha\n-beta\n+omega\n", rewriteErr: "Cannot express this patch so that the host writes the intended text in <root>/a.txt", want: map[string]string{"a.txt": "alpha\nomega"}},
		{name: "E04 mixed line ends: each line keeps its own", files: map[string]string{"a.txt": "a\r\nb\nc\n"}, patch: "*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n", want: map[string]string{"a.txt": "a\r\nB\nc\n"}},
		{name: "E05 lone CR line ends: applied, never handed on", files: map[string]string{"a.txt": "a\rb\rc\r"}, patch: "*** Update File: a.txt\n@@\n a\n-b\n+B\n c\n", rewriteErr: "lone CR", want: map[string]string{"a.txt": "a\rB\rc\r"}},
		{name: "E06 BOM set aside and kept", files: map[string]string{"a.txt": "\uFEFFalpha\nbeta\n"}, patch: "*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": "\uFEFFalpha\nBETA\n"}},
		{name: "E07 End of File insertion into an empty file", files: map[string]string{"a.txt": ""}, patch: "*** Update File: a.txt\n@@\n+First line\n*** End of File\n", want: map[string]string{"a.txt": "First line\n"}},
		{name: "E07 empty old line against an empty file becomes an insertion", files: map[string]string{"a.txt": ""}, patch: "*** Update File: a.txt\n@@\n-\n+x\n", want: map[string]string{"a.txt": "x\n"}},
		{name: "binary file refused", files: map[string]string{"b.bin": "a\x00b\n"}, patch: "*** Update File: b.bin\n@@\n-a\n+b\n", errKind: X, errSub: "Refusing binary or non-UTF-8 file: <root>/b.bin"},
		{name: "non-UTF-8 file refused", files: map[string]string{"b.txt": "caf\xe9\n"}, patch: "*** Update File: b.txt\n@@\n-x\n+b\n", errKind: X, errSub: "Refusing binary or non-UTF-8 file"},

		// Several hunks, Add, Delete, Move.
		{name: "H01 two Updates of one file merged into one hunk", files: map[string]string{"a.txt": "alpha\nbeta\ngamma\ndelta\n"}, patch: "*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** Update File: a.txt\n@@\n gamma\n-delta\n+DELTA\n", decision: DecisionRewrite, repairs: []string{patch.RepairSamePathMerged}, outSub: []string{"@@ alpha\n-beta\n+BETA\n@@ gamma\n-delta\n+DELTA\n"}, want: map[string]string{"a.txt": "alpha\nBETA\ngamma\nDELTA\n"}},
		{name: "H02 second Update edits the first one's result", files: map[string]string{"a.txt": "alpha\nbeta\ngamma\n"}, patch: "*** Update File: a.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** Update File: a.txt\n@@\n alpha\n-BETA\n+BETA!\n gamma\n", decision: DecisionRewrite, outSub: []string{"@@ alpha\n-beta\n+BETA!\n"}, want: map[string]string{"a.txt": "alpha\nBETA!\ngamma\n"}},
		{name: "H03 two Updates of separate lines", files: map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive\n"}, patch: "*** Update File: a.txt\n@@\n-two\n+TWO\n*** Update File: a.txt\n@@\n-four\n+FOUR\n", want: map[string]string{"a.txt": "one\nTWO\nthree\nFOUR\nfive\n"}},
		{name: "H06 second Update of a line the first one changed refused", files: abc, patch: "*** Update File: a.txt\n@@\n-b\n+B\n*** Update File: a.txt\n@@\n-b\n+Z\n", errKind: X, errSub: "Failed to find expected lines in <root>/a.txt:\nb"},
		{name: "H07 second Update rescued after the first", files: map[string]string{"a.txt": "a\nb\nleft\n  old\nright\n"}, patch: "*** Update File: a.txt\n@@\n-b\n+B\n*** Update File: a.txt\n@@\n left\n-old\n+new\n right\n", decision: DecisionRewrite, outSub: []string{"@@ left\n-  old\n+new\n"}, want: map[string]string{"a.txt": "a\nB\nleft\nnew\nright\n"}},
		{name: "H08 ambiguous first Update refuses the patch", files: map[string]string{"a.txt": "x\nx\nx\n"}, patch: "*** Update File: a.txt\n@@\n-x\n+y\n*** Update File: a.txt\n@@\n y\n-x\n+z\n", errKind: X, errSub: "Candidates at lines 1, 2, 3."},
		{name: "H09 Add then Update becomes one Add", patch: "*** Add File: added.txt\n+alpha\n+beta\n*** Update File: added.txt\n@@\n alpha\n-beta\n+BETA\n", decision: DecisionRewrite, outSub: []string{"*** Add File: added.txt\n+alpha\n+BETA\n*** End Patch"}, want: map[string]string{"added.txt": "alpha\nBETA\n"}},
		{name: "H10 Add then Move becomes an Add at the destination", patch: "*** Add File: before.txt\n+alpha\n*** Update File: before.txt\n*** Move to: nested/after.txt\n@@\n-alpha\n+ALPHA\n", decision: DecisionRewrite, outSub: []string{"*** Add File: nested/after.txt\n+ALPHA\n"}, want: map[string]string{"before.txt": absent, "nested/after.txt": "ALPHA\n"}},
		{name: "H11 Add then two Updates", patch: "*** Add File: n.txt\n+a\n+b\n*** Update File: n.txt\n@@\n-a\n+A\n*** Update File: n.txt\n@@\n-b\n+B\n", want: map[string]string{"n.txt": "A\nB\n"}},
		{name: "H12 Move then Update at the destination merged", files: map[string]string{"before.txt": "alpha\nbeta\ngamma\n"}, patch: "*** Update File: before.txt\n*** Move to: nested/after.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** Update File: nested/after.txt\n@@\n alpha\n BETA\n-gamma\n+GAMMA\n", decision: DecisionRewrite, outSub: []string{"*** Update File: before.txt\n*** Move to: nested/after.txt\n@@ alpha\n-beta\n-gamma\n+BETA\n+GAMMA\n*** End of File\n"}, want: map[string]string{"before.txt": absent, "nested/after.txt": "alpha\nBETA\nGAMMA\n"}},
		{name: "H14 two Moves in a row become one", files: map[string]string{"a.txt": "one\ntwo\n"}, patch: "*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n two\n", decision: DecisionRewrite, outSub: []string{"*** Update File: a.txt\n*** Move to: c.txt\n"}, want: map[string]string{"a.txt": absent, "b.txt": absent, "c.txt": "one\ntwo\n"}},
		{name: "H15 Move away then Add at the old path", files: map[string]string{"before.txt": "x\n"}, patch: "*** Update File: before.txt\n*** Move to: nested/after.txt\n@@\n-x\n+y\n*** Add File: before.txt\n+replacement\n", want: map[string]string{"before.txt": "replacement\n", "nested/after.txt": "y\n"}},
		{name: "H16 Delete of a path moved away refused", files: map[string]string{"before.txt": "x\n"}, patch: "*** Update File: before.txt\n*** Move to: after.txt\n@@\n-x\n+y\n*** Delete File: before.txt\n", errKind: X, errSub: "Failed to read file to delete: <root>/before.txt"},
		{name: "H17 Update of a path moved away refused", files: map[string]string{"before.txt": "x\n"}, patch: "*** Update File: before.txt\n*** Move to: after.txt\n@@\n-x\n+y\n*** Update File: before.txt\n@@\n-y\n+z\n", errKind: X, errSub: "Failed to read file to update: <root>/before.txt"},
		{name: "H18 Move onto an existing file refused", files: map[string]string{"a.txt": "x\n", "b.txt": "y\n"}, patch: "*** Update File: a.txt\n*** Move to: b.txt\n@@\n-x\n+z\n", errKind: X, errSub: "Move destination already exists: <root>/b.txt"},
		{name: "H19 Add onto an existing file refused", files: map[string]string{"a.txt": "x\n"}, patch: "*** Add File: a.txt\n+y\n", errKind: X, errSub: "Add File target already exists: <root>/a.txt"},
		{name: "H20 Add onto a file updated earlier refused", files: map[string]string{"a.txt": "x\n"}, patch: "*** Update File: a.txt\n@@\n-x\n+y\n*** Add File: a.txt\n+z\n", errKind: X, errSub: "Add File target already exists"},
		{name: "H21 Delete then Add replaces the file", files: map[string]string{"a.txt": "x\n"}, patch: "*** Delete File: a.txt\n*** Add File: a.txt\n+fresh\n", want: map[string]string{"a.txt": "fresh\n"}},
		{name: "H21 Add then Delete leaves nothing", patch: "*** Add File: n.txt\n+x\n*** Delete File: n.txt\n*** Add File: m.txt\n+m\n", want: map[string]string{"n.txt": absent, "m.txt": "m\n"}},
		{name: "H22 Delete of a missing file refused", patch: "*** Delete File: missing.txt\n", errKind: X, errSub: "Failed to read file to delete: <root>/missing.txt"},
		{name: "H22 second Delete of one file refused", files: map[string]string{"a.txt": "x\n"}, patch: "*** Delete File: a.txt\n*** Delete File: a.txt\n", errKind: X, errSub: "Failed to read file to delete: <root>/a.txt"},
		{name: "H23 Delete of a directory refused", files: map[string]string{"dir/f.txt": "x\n"}, patch: "*** Delete File: dir\n", errKind: X, errSub: "Failed to read file to delete: <root>/dir"},
		{name: "H24 Update of a missing file refused", patch: "*** Update File: missing.txt\n@@\n-x\n+y\n", errKind: X, errSub: "Failed to read file to update: <root>/missing.txt"},
		{name: "H25 Move onto itself dropped", files: abc, patch: "*** Update File: a.txt\n*** Move to: a.txt\n@@\n a\n-b\n+B\n c\n", decision: DecisionRewrite, repairs: []string{patch.RepairSelfMoveDropped}, want: aBc},
		{name: "H26 two spellings of one path merged", files: map[string]string{"a.txt": "a\nb\nc\nd\n"}, patch: "*** Update File: a.txt\n@@\n-b\n+B\n*** Update File: ./a.txt\n@@\n-d\n+D\n", decision: DecisionRewrite, outSub: []string{"*** Update File: a.txt\n@@"}, want: map[string]string{"a.txt": "a\nB\nc\nD\n"}},
		{name: "H27 Update, Add and Delete handed on unchanged", files: map[string]string{"u.txt": "u\n", "d.txt": "d\n"}, patch: "*** Update File: u.txt\n@@\n-u\n+U\n*** Add File: n.txt\n+n\n*** Delete File: d.txt\n", decision: DecisionUnchanged, want: map[string]string{"u.txt": "U\n", "n.txt": "n\n", "d.txt": absent}},
		{name: "H28 failure after an Add writes nothing", patch: "*** Add File: created.txt\n+x\n*** Update File: missing.txt\n@@\n-x\n+y\n", errKind: X, errSub: "Failed to read file to update", want: map[string]string{"created.txt": absent}},

		// More end-to-end cases.
		{name: "H05 merged Updates get the preceding line as @@ text", files: map[string]string{"a.txt": "a\nb\nc\nd\ne\n"}, patch: "*** Update File: a.txt\n@@\n-b\n+B\n*** Update File: a.txt\n@@\n-d\n+D\n", decision: DecisionRewrite, outSub: []string{"@@ a\n-b\n+B\n@@ c\n-d\n+D\n"}, want: map[string]string{"a.txt": "a\nB\nc\nD\ne\n"}},
		{name: "H13 Move with context only, then Update at the destination", files: map[string]string{"before.txt": "alpha\nbeta\ngamma\n"}, patch: "*** Update File: before.txt\n*** Move to: nested/after.txt\n@@\n alpha\n*** Update File: nested/after.txt\n@@\n alpha\n-beta\n+BETA\n", decision: DecisionRewrite, outSub: []string{"*** Move to: nested/after.txt\n@@ alpha\n-beta\n+BETA\n"}, want: map[string]string{"nested/after.txt": "alpha\nBETA\ngamma\n", "before.txt": absent}},
		{name: "E02 CRLF file: a rescued and an exact chunk both carry the CR", files: map[string]string{"a.txt": "top\r\nprefix\r\n  old-value\r\nsuffix\r\nkeep\r\ntail-old\r\n"}, patch: "*** Update File: a.txt\n@@ top\n prefix\n-old-value\n+new-value\n suffix\n@@\n keep\n-tail-old\n+tail-new\n", decision: DecisionRewrite, repairs: []string{patch.RepairHostEOL}, want: map[string]string{"a.txt": "top\r\nprefix\r\nnew-value\r\nsuffix\r\nkeep\r\ntail-new\r\n"}},
		{name: "CRLF file: End of File insertion gets CRLF", files: map[string]string{"a.txt": "a\r\nb\r\n"}, patch: "*** Update File: a.txt\n@@\n+c\n*** End of File\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "a\r\nb\r\nc\r\n"}},
		{name: "BOM and CRLF together", files: map[string]string{"a.txt": "\uFEFFa\r\nb\r\n"}, patch: "*** Update File: a.txt\n@@\n-a\n+A\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "\uFEFFA\r\nb\r\n"}},
		{name: "appending to a file without a final newline: applied, never handed on", files: map[string]string{"a.txt": "a"}, patch: "*** Update File: a.txt\n@@\n a\n+b\n", rewriteErr: "does not end with a newline", want: map[string]string{"a.txt": "a\nb"}},
		{name: "removing the only line leaves an empty file", files: map[string]string{"a.txt": "a\n"}, patch: "*** Update File: a.txt\n@@\n-a\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": ""}},
		{name: "I04 anchor with trailing spaces, insertion in the middle", files: map[string]string{"a.txt": "top\nanchor  \nbottom\n"}, patch: "*** Update File: a.txt\n@@ anchor\n+middle\n", decision: DecisionRewrite, outSub: []string{"@@ anchor  \n+middle\n bottom\n"}, want: map[string]string{"a.txt": "top\nanchor  \nmiddle\nbottom\n"}},
		{name: "I07 anchor found twice, once tolerantly, refused", files: map[string]string{"a.txt": "top\n“anchor”\n\"anchor\"\n"}, patch: "*** Update File: a.txt\n@@ \"anchor\"\n+x\n", errKind: X, errSub: "Candidates at lines 2, 3."},
		{name: "I11 rescued End of File chunk in a file without a final newline: applied, never handed on", files: map[string]string{"a.txt": "alpha\n  old\nomega"}, patch: "*** Update File: a.txt\n@@\n alpha\n-old\n+new\n omega\n*** End of File\n", rewriteErr: "does not end with a newline", want: map[string]string{"a.txt": "alpha\nnew\nomega"}},
		{name: "I14 End of File pins the last copy of a two-line block", files: map[string]string{"a.txt": "x\nend\nx\nend\n"}, patch: "*** Update File: a.txt\n@@\n x\n-end\n+END\n*** End of File\n", want: map[string]string{"a.txt": "x\nend\nx\nEND\n"}},
		{name: "R03 two rescuable places refused", files: map[string]string{"a.txt": "left\n  old\nright\nseparator\nleft\n  old\nright\n"}, patch: "*** Update File: a.txt\n@@\n left\n-old\n+new\n right\n", errKind: X, errSub: "Candidates at lines 1, 5."},
		{name: "R06 @@ text picks the second rescuable place", files: map[string]string{"a.txt": "left\n  old\nright\nsep\nleft\n  old\nright\n"}, patch: "*** Update File: a.txt\n@@ sep\n left\n-old\n+new\n right\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "left\n  old\nright\nsep\nleft\nnew\nright\n"}},
		{name: "R07 cursor after an earlier chunk picks the second place", files: map[string]string{"a.txt": "left\n  old\nright\nmid\nleft\n  old\nright\n"}, patch: "*** Update File: a.txt\n@@\n-mid\n+MID\n@@\n left\n-old\n+new\n right\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "left\n  old\nright\nMID\nleft\nnew\nright\n"}},
		{name: "R18 indentation drift inside the context rescued", files: map[string]string{"a.txt": "h\na\n    b\nc\nd\nt\n"}, patch: "*** Update File: a.txt\n@@\n a\n b\n-c\n+C\n d\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "h\na\n    b\nC\nd\nt\n"}},
		{name: "@@ text not in the file dropped", files: map[string]string{"a.txt": "a\nb\n"}, patch: "*** Update File: a.txt\n@@ def gone():\n-b\n+B\n", decision: DecisionRewrite, repairs: []string{patch.RepairContextNotFound}, outSub: []string{"*** Update File: a.txt\n@@\n-b\n+B\n"}, want: map[string]string{"a.txt": "a\nB\n"}},
		{name: "Move without change handed on unchanged", files: map[string]string{"a.txt": "one\n"}, patch: "*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n", decision: DecisionUnchanged, want: map[string]string{"a.txt": absent, "b.txt": "one\n"}},
		{name: "Update then Delete becomes a Delete", files: map[string]string{"a.txt": "one\n"}, patch: "*** Update File: a.txt\n@@\n-one\n+two\n*** Delete File: a.txt\n", decision: DecisionRewrite, outSub: []string{"*** Begin Patch\n*** Delete File: a.txt\n*** End Patch"}, want: map[string]string{"a.txt": absent}},
		{name: "Update of a directory refused", files: map[string]string{"d/x": "x\n"}, patch: "*** Update File: d\n@@\n-x\n+y\n", errKind: X, errSub: "Failed to read file to update: <root>/d"},
		{name: "Add with no lines gives an empty file", patch: "*** Add File: empty.txt\n*** Add File: one.txt\n+a\n+\n", decision: DecisionUnchanged, want: map[string]string{"empty.txt": "", "one.txt": "a\n"}},
		{name: "Add and End of File insertion of blank lines", patch: "*** Add File: two.txt\n+a\n+\n+\n*** Add File: x.txt\n+x\n*** Update File: x.txt\n@@\n x\n+\n+\n*** End of File\n", decision: DecisionRewrite, want: map[string]string{"two.txt": "a\n\n", "x.txt": "x\n\n\n"}},
		{name: "I12 rescued End of File chunk not at the end: marker dropped", files: map[string]string{"a.txt": "top\nprefix\n  old\nsuffix\nbottom\n"}, patch: "*** Update File: a.txt\n@@\n prefix\n-old\n+new\n suffix\n*** End of File\n", decision: DecisionRewrite, outSub: []string{"+new\n suffix\n*** End Patch"}, want: map[string]string{"a.txt": "top\nprefix\nnew\nsuffix\nbottom\n"}},
		{name: "I13 End of File update in a file without a final newline: applied, never handed on", files: map[string]string{"a.txt": "alpha\nbeta"}, patch: "*** Update File: a.txt\n@@\n-beta\n+omega\n*** End of File\n", rewriteErr: "does not end with a newline", want: map[string]string{"a.txt": "alpha\nomega"}},
		{name: "I14 End of File pins the last of two single lines", files: map[string]string{"a.txt": "x\ny\nx\n"}, patch: "*** Update File: a.txt\n@@\n-x\n+X\n*** End of File\n", want: map[string]string{"a.txt": "x\ny\nX\n"}},
		{name: "I15 End of File falls back to the only copy, marker dropped", files: map[string]string{"a.txt": "x\ny\n"}, patch: "*** Update File: a.txt\n@@\n-x\n+X\n*** End of File\n", decision: DecisionRewrite, outSub: []string{"-x\n+X\n*** End Patch"}, want: map[string]string{"a.txt": "X\ny\n"}},
		{name: "I16 result ending in a blank line: applied, never handed on", files: map[string]string{"a.txt": "alpha\n\n"}, patch: "*** Update File: a.txt\n@@\n-alpha\n+omega\n \n", rewriteErr: "blank line", want: map[string]string{"a.txt": "omega\n\n"}},
		{name: "I17 trailing empty old and new lines retried without them", files: map[string]string{"a.txt": "alpha\n"}, patch: "*** Update File: a.txt\n@@\n-alpha\n-\n+omega\n+\n", decision: DecisionRewrite, want: map[string]string{"a.txt": "omega\n"}},
		{name: "stacked @@ lines reported as nested context when rewritten", files: map[string]string{"a.py": "class A:\n    def f():\n        old  \n"}, patch: "*** Update File: a.py\n@@ class A:\n@@     def f():\n-        old\n+        new\n", decision: DecisionRewrite, repairs: []string{patch.RepairNestedContext}, outSub: []string{"@@ class A:\n@@     def f():\n-        old  \n+        new\n"}, want: map[string]string{"a.py": "class A:\n    def f():\n        new\n"}},
		// Failure modes.
		{name: "K03 verification failure carries its prefix", files: map[string]string{"a.txt": "present\n"}, patch: "*** Update File: a.txt\n@@\n-missing\n+x\n", errKind: X, errSub: "apply_patch verification failed: Failed to find expected lines"},
		{name: "K08 clean patch handed on byte for byte", files: abc, patch: upd, decision: DecisionUnchanged, want: aBc},
	}
}
