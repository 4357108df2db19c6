package search

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needRg returns the ripgrep on PATH. Without one the test is skipped,
// except under CI (CI=true), where a missing rg is a failure: .ci/run
// installs it.
func needRg(t testing.TB) *Ripgrep {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ripgrep (rg) is not on PATH; .ci/run installs it")
		}
		t.Skip("ripgrep (rg) is not on PATH")
	}
	return &Ripgrep{Path: p, Source: SourcePath}
}

// writeTree writes files (slash paths to contents) below root.
func writeTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// utf16le is s in UTF-16LE with a byte order mark.
func utf16le(s string) string {
	var b bytes.Buffer
	b.Write([]byte{0xFF, 0xFE})
	for _, r := range s {
		b.WriteByte(byte(r))
		b.WriteByte(byte(r >> 8))
	}
	return b.String()
}

// polyglotTree is a project in several languages with the cases the
// fallback must treat as ripgrep does: ignore files at several levels and
// of every kind, negations, hidden files, a worktree lane hidden from git
// but re-included by .ignore, binary files, encodings, line ends and links.
func polyglotTree(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		".git/HEAD":                    "ref: refs/heads/main\n",
		".git/config":                  "[core]\nneedle = inside git\n",
		".git/info/exclude":            "excluded-by-info.txt\n",
		".gitignore":                   "*.log\n!keep.log\nbuild/\nnode_modules/\n/dist\n.slim/\n",
		".ignore":                      "!.slim/\n!.slim/worktrees/**\nignored-by-ignore.txt\n",
		".rgignore":                    "!ignored-by-ignore.txt\nrgonly.txt\n",
		"go.mod":                       "module example.com/poly\n",
		"main.go":                      "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"needle in go\")\n}\n\nfunc helperNeedle() int { return 42 }\n",
		"internal/util/util.go":        "package util\n\n// Needle is exported.\nfunc Needle() string { return \"needle\" }\n",
		"internal/util/util_test.go":   "package util\n\nimport \"testing\"\n\nfunc TestNeedle(t *testing.T) { _ = Needle() }\n",
		"app/models.py":                "class Needle:\n    def find(self):\n        return 'needle'\n\n\ndef haystack():\n    pass\n",
		"app/__init__.py":              "",
		"web/src/index.ts":             "export function needle(x: number): number {\n  return x * 2; // needle\n}\n",
		"web/src/App.tsx":              "export const App = () => <div className=\"needle\">hello</div>;\n",
		"web/src/util.js":              "const needle = 1;\nmodule.exports = { needle };\n",
		"web/dist/bundle.min.js":       "var needle=1;" + strings.Repeat("function a(){return 1};", 3000) + "\n",
		"dist/top.js":                  "needle in anchored dist\n",
		"crate/src/lib.rs":             "pub fn needle() -> &'static str {\n    \"needle\"\n}\n",
		"docs/guide.md":                "# Guide\n\nFind the needle here.\n\nNo match on this line.\n",
		"docs/notes.txt":               "needle at the start\nmiddle\nend needle\n",
		"build/out.txt":                "needle in build\n",
		"node_modules/dep/index.js":    "needle in node_modules\n",
		"server.log":                   "needle in log\n",
		"keep.log":                     "needle kept log\n",
		"ignored-by-ignore.txt":        "needle re-included by rgignore\n",
		"rgonly.txt":                   "needle ignored by rgignore\n",
		"excluded-by-info.txt":         "needle excluded by info/exclude\n",
		".hidden/secret.txt":           "needle in hidden dir\n",
		".env.example":                 "NEEDLE=1\nneedle=2\n",
		".slim/worktrees/lane/lane.go": "package lane // needle in lane\n",
		"sub/.gitignore":               "local.txt\n!important.log\n",
		"sub/local.txt":                "needle ignored by a nested gitignore\n",
		"sub/important.log":            "needle re-included by a nested gitignore\n",
		"sub/deeper/more.txt":          "needle deep\n",
		"crlf.txt":                     "needle with crlf\r\nsecond line\r\n",
		"bom.txt":                      "\xEF\xBB\xBFneedle after a bom\n",
		"utf16.txt":                    utf16le("needle in utf16\nsecond\n"),
		"binary.bin":                   "needle before nul\x00after\n",
		"latin1.txt":                   "caf\xe9 needle\n",
		"unicode.txt":                  "naïve needle ünïcode\n",
		"spaces in name.txt":           "needle with spaces\n",
		"noeol.txt":                    "needle without final newline",
	}
	writeTree(t, root, files)
	// A large file whose NUL byte comes after its first block: the match
	// before it is reported, the one after is not.
	var big strings.Builder
	big.WriteString("needle early in late-binary\n")
	for big.Len() < 3*blockSize {
		big.WriteString("filler line without the word\n")
	}
	big.WriteString("\x00\nneedle after the nul\n")
	writeTree(t, root, map[string]string{"late-binary.dat": big.String()})
	if err := os.Symlink("main.go", filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("docs", filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	// Known modification times, so the order of results is known: every
	// file two hours old, then these five newer, the later the newer.
	old := time.Now().Add(-2 * time.Hour)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	order := []string{"docs/notes.txt", "app/models.py", "web/src/index.ts", "internal/util/util.go", "main.go"}
	base := time.Now().Add(-time.Hour)
	for i, name := range order {
		tm := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(name)), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
