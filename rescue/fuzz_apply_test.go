package rescue_test

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slimgate/slim/internal/drift"
	"github.com/slimgate/slim/rescue"
)

// fuzzOther is a second file every FuzzApply run has, so that patches can
// touch more than one file.
const fuzzOther = "package b\n\nfunc B() string {\n\treturn \"b\"\n}\n"

// fuzzSeeds returns (file, patch) pairs in the shapes models send: clean and
// drifted single-chunk updates, CRLF and no-final-newline files, Add, Delete,
// Move, anchored insertion, ambiguity, wrappers and garbage.
func fuzzSeeds() []fuzzSeed {
	src := "package a\n\nimport \"fmt\"\n\n// Greet says hello.\nfunc Greet(name string) {\n\tmsg := \"hello, \" + name\n\tfmt.Println(msg)\n\tfmt.Println('x')\n}\n\nfunc Bye() {\n\tfmt.Println(\"bye\")\n}\n"
	orig := drift.Split([]byte(src))
	var seeds []fuzzSeed
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range drift.Kinds {
		if c, ok := drift.NewCase(r, k, "a.txt", orig); ok {
			seeds = append(seeds, fuzzSeed{string(c.DiskBytes()), c.Patch.Text, c.Want})
		}
	}
	const apply, refuse, either = drift.MustApply, drift.MustRefuse, drift.Either
	seeds = append(seeds,
		fuzzSeed{strings.ReplaceAll(src, "\n", "\r\n"), "*** Begin Patch\n*** Update File: a.txt\n@@ func Bye() {\n-\tfmt.Println(\"bye\")\n+\tfmt.Println(\"farewell\")\n }\n*** End Patch\n", apply},
		fuzzSeed{strings.TrimSuffix(src, "\n"), "*** Begin Patch\n*** Update File: a.txt\n@@\n \tfmt.Println(\"bye\")\n-}\n+}\n+// end\n*** End of File\n*** End Patch", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Add File: new/dir/n.txt\n+one\n+two\n*** Delete File: b/b.go\n*** End Patch\n", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Update File: a.txt\n*** Move to: moved/a.txt\n@@ func Bye() {\n+\t// moved\n \tfmt.Println(\"bye\")\n*** End Patch\n", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Update File: a.txt\n@@ import \"fmt\"\n+import \"os\"\n*** End Patch\n", apply},
		fuzzSeed{src + src, "*** Begin Patch\n*** Update File: a.txt\n@@\n func Bye() {\n-\tfmt.Println(\"bye\")\n+\tfmt.Println(\"ciao\")\n }\n*** End Patch\n", refuse},
		fuzzSeed{src, "<<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n \tmsg := \"hello, \" + name\n-\tfmt.Println(msg)\n+\tfmt.Print(msg)\n*** End Patch\nEOF\n", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Update File: b/b.go\n@@ func B() string {\n-\treturn \u201Cb\u201D\n+\treturn \"bb\"\n }\n*** End Patch\n", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Update File: ../escape.txt\n@@\n-x\n+y\n*** End Patch\n", refuse},
		fuzzSeed{"", "*** Begin Patch\n*** Update File: a.txt\n@@\n+first line\n*** End Patch\n", apply},
		fuzzSeed{"\ufeff" + src, "*** Begin Patch\n*** Update File: a.txt\n@@\n-package a\n+package aa\n \n import \"fmt\"\n*** End Patch\n", apply},
		fuzzSeed{src, "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n", refuse},
		fuzzSeed{src, "garbage", refuse},
	)
	return seeds
}

// FuzzApply checks the apply transaction on arbitrary files and patches:
// a refusal leaves the directory byte-identical (no new files or
// directories), and a success is reproduced by rewrite mode: applying the
// patch it hands on to the old files gives the same final bytes.
func FuzzApply(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add([]byte(s.file), s.patch)
	}
	f.Fuzz(func(t *testing.T, file []byte, patch string) {
		base := t.TempDir()
		old := map[string][]byte{"a.txt": file, "b/b.go": []byte(fuzzOther)}
		// The root is a subdirectory, so writes that escape it would show
		// up in base.
		root := filepath.Join(base, "root")
		writeTree(t, root, old)
		writeTree(t, filepath.Join(base, "sibling"), map[string][]byte{"s.txt": []byte("outside\n")})
		before := snapshot(t, base)

		opts := rescue.Options{Directory: root, NoWorktree: true, Outside: rescue.OutsideBlock, Apply: true}
		res, err := rescue.Process([]byte(patch), opts)
		after := snapshot(t, base)
		if err != nil {
			var se *rescue.Error
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *rescue.Error: %T %v", err, err)
			}
			if d := before.diff(after); d != "" {
				t.Fatalf("refused (%s: %s), but the directory changed: %s", se.Kind, se.Message, d)
			}
			if res == nil || res.Decision != rescue.DecisionBlock {
				t.Fatalf("refused, but Result is %+v", res)
			}
			return
		}
		for p := range before {
			if !strings.HasPrefix(p, "root/") {
				if before[p] != after[p] {
					t.Fatalf("applied, and %s outside the root changed", p)
				}
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok && !strings.HasPrefix(p, "root/") {
				t.Fatalf("applied, and %s appeared outside the root", p)
			}
		}

		// Rewrite mode on the old files, then apply what it hands on.
		root2 := filepath.Join(base, "root2")
		writeTree(t, root2, old)
		opts2 := rescue.Options{Directory: root2, NoWorktree: true, Outside: rescue.OutsideBlock}
		res2, err := rescue.Process([]byte(patch), opts2)
		if err != nil {
			var se *rescue.Error
			if errors.As(err, &se) && se.Kind == rescue.Verification && strings.Contains(se.Message, "Cannot express") {
				return // the host cannot write these bytes, so rewrite mode refuses; apply mode writes them itself
			}
			t.Fatalf("apply mode succeeded, rewrite mode failed: %v", err)
		}
		if res2.PatchText == nil {
			t.Fatalf("rewrite mode returned no patch text: %+v", res2)
		}
		opts2.Apply = true
		if _, err := rescue.Process([]byte(*res2.PatchText), opts2); err != nil {
			t.Fatalf("the handed-on patch does not apply: %v\n%s", err, *res2.PatchText)
		}
		want := subtree(after, "root/")
		got := subtree(snapshot(t, root2), "")
		if d := want.diff(got); d != "" {
			t.Fatalf("rewrite then apply differs from apply: %s\nhanded-on patch:\n%s", d, *res2.PatchText)
		}
	})
}

// subtree returns the entries of t below prefix, with the prefix removed.
func subtree(t tree, prefix string) tree {
	out := tree{}
	for k, v := range t {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// fuzzSeed is a seed input and the outcome it must have.
type fuzzSeed struct {
	file, patch string
	want        drift.Want
}

// TestFuzzSeeds keeps the seeds honest: each has the outcome it was made
// for, so the fuzzer starts from both sides of the apply/refuse line.
func TestFuzzSeeds(t *testing.T) {
	for i, s := range fuzzSeeds() {
		root := filepath.Join(t.TempDir(), "root")
		writeTree(t, root, map[string][]byte{"a.txt": []byte(s.file), "b/b.go": []byte(fuzzOther)})
		_, err := rescue.Process([]byte(s.patch), rescue.Options{Directory: root, NoWorktree: true, Outside: rescue.OutsideBlock, Apply: true})
		switch {
		case s.want == drift.MustApply && err != nil:
			t.Errorf("seed %d refused: %v\n%s", i, err, s.patch)
		case s.want == drift.MustRefuse && err == nil:
			t.Errorf("seed %d applied:\n%s", i, s.patch)
		}
	}
}
