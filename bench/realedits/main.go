// Command realedits measures slim rescue on real edit history: for each
// pinned release triple A < B < C of a Go module (modules.txt), every Go
// file that changed from A to B and from A to C becomes one case. The
// stale patch is the Codex-format diff A -> C (what a model that read A
// would write to reach C); it is applied to B, which holds the edits
// released in between. git merge-file of B, A and C decides what a
// careful human expects: where it merges cleanly, its result is the
// expected file; where it conflicts, the patch must be refused with the
// file untouched.
//
// Every case runs through rescue.Process in apply mode and in rewrite
// mode (whose handed-on patch is then applied and must give the same
// bytes), and gets one outcome:
//
//	right          applied and equal to the merge, or refused where the merge conflicts
//	wrong apply    applied, but not equal to the merge (a clean merge)
//	false refusal  refused where the merge is clean
//	unsafe apply   applied where the merge conflicts, or a refusal that changed a file
//
// The table groups the cases by class: B == C (every change of the patch
// is already in B), a clean merge equal to C (B's edits are all kept in
// C), a clean merge that differs from C, and a conflict.
//
// Usage:
//
//	go run ./bench/realedits [-modules FILE] [-dump DIR] [-v]
//
// The versions are fetched with `go mod download -json` into the module
// cache (GOPROXY and GOFLAGS as the environment sets them); git must be on
// PATH. It exits 1 when any case is a wrong or unsafe apply.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slimgate/slim/rescue"
)

func main() {
	modules := flag.String("modules", "bench/realedits/modules.txt", "file of pinned release triples: module A B C per line")
	dump := flag.String("dump", "", "directory to write every case that is not right into")
	verbose := flag.Bool("v", false, "print every case that is not right")
	flag.Parse()
	triples, err := readTriples(*modules)
	if err != nil {
		fatal(err)
	}
	work, err := os.MkdirTemp("", "realedits-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)
	r := &runner{work: work, dump: *dump, verbose: *verbose, stats: map[string]*classStats{}}
	for _, t := range triples {
		if err := r.triple(t); err != nil {
			fatal(err)
		}
	}
	r.report(os.Stdout)
	if r.bad > 0 {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "realedits:", err)
	os.Exit(2)
}

// triple is one pinned line of the module list.
type triple struct{ mod, a, b, c string }

func readTriples(path string) ([]triple, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []triple
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 {
			return nil, fmt.Errorf("%s:%d: want module A B C, got %q", path, n, line)
		}
		out = append(out, triple{f[0], f[1], f[2], f[3]})
	}
	return out, sc.Err()
}

// download fetches mod@version into the module cache and returns its
// directory.
func download(mod, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil && err == nil {
		err = jerr
	}
	if info.Error != "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", mod, version, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", mod, version, err)
	}
	return info.Dir, nil
}

// goFiles returns the slash paths of the .go files below dir.
func goFiles(dir string) (map[string]bool, error) {
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	return out, err
}

// Classes, in report order.
const (
	classApplied  = "B = C: the patch is already in B"
	classKept     = "clean merge = C"
	classCombined = "clean merge != C"
	classConflict = "conflict"
)

var classes = []string{classApplied, classKept, classCombined, classConflict}

// Outcomes.
const (
	right        = "right"
	wrongApply   = "wrong apply"
	falseRefusal = "false refusal"
	unsafeApply  = "unsafe apply"
)

type classStats struct {
	cases, chunks                       int
	outcomes                            map[string]int
	rewriteRewritten, rewriteCannotHost int
	strategies                          map[string]int
}

type runner struct {
	work    string
	dump    string
	verbose bool
	stats   map[string]*classStats
	id      int
	bad     int // wrong or unsafe applies
}

func (r *runner) triple(t triple) error {
	var dirs [3]string
	for i, v := range []string{t.a, t.b, t.c} {
		d, err := download(t.mod, v)
		if err != nil {
			return err
		}
		dirs[i] = d
	}
	var sets [3]map[string]bool
	for i, d := range dirs {
		s, err := goFiles(d)
		if err != nil {
			return err
		}
		sets[i] = s
	}
	var rels []string
	for rel := range sets[0] {
		if sets[1][rel] && sets[2][rel] {
			rels = append(rels, rel)
		}
	}
	sort.Strings(rels)
	for _, rel := range rels {
		var texts [3][]byte
		for i, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(rel)))
			if err != nil {
				return err
			}
			texts[i] = b
		}
		a, b, c := texts[0], texts[1], texts[2]
		if bytes.Equal(a, b) || bytes.Equal(a, c) {
			continue // not stale, or no patch
		}
		if !text(a) || !text(b) || !text(c) {
			continue
		}
		if err := r.run(t, rel, a, b, c); err != nil {
			return fmt.Errorf("%s@%s %s: %w", t.mod, t.c, rel, err)
		}
	}
	return nil
}

func text(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// run builds and runs one case.
func (r *runner) run(t triple, rel string, a, b, c []byte) error {
	r.id++
	dir := filepath.Join(r.work, strconv.Itoa(r.id))
	patch, chunks, err := codexPatch(dir, rel, a, c)
	if err != nil {
		return err
	}
	merged, conflicts, err := mergeFile(dir, a, b, c)
	if err != nil {
		return err
	}
	class := classCombined
	switch {
	case conflicts > 0:
		class = classConflict
	case bytes.Equal(b, c):
		class = classApplied
	case bytes.Equal(merged, c):
		class = classKept
	}
	st := r.stats[class]
	if st == nil {
		st = &classStats{outcomes: map[string]int{}, strategies: map[string]int{}}
		r.stats[class] = st
	}
	st.cases++
	st.chunks += chunks

	name := t.mod + "@" + t.a + ".." + t.c + " " + rel
	outcome, note, got, applied := r.apply(dir, rel, patch, b, merged, conflicts > 0, st)
	rw, rwNote := r.rewrite(dir, rel, patch, b, got, applied, st)
	if rw != "" && outcome == right {
		outcome, note = rw, rwNote
	}
	st.outcomes[outcome]++
	if outcome == wrongApply || outcome == unsafeApply {
		r.bad++
	}
	if outcome != right {
		if r.verbose {
			fmt.Fprintf(os.Stderr, "%s: %s (%s): %s\n", name, outcome, class, firstLine(note))
		}
		r.dumpCase(name, outcome, class, note, rel, a, b, c, patch, merged, got)
	}
	return os.RemoveAll(dir)
}

// apply runs the patch in apply mode on a directory holding B.
func (r *runner) apply(dir, rel, patch string, b, merged []byte, conflict bool, st *classStats) (outcome, note string, got []byte, applied bool) {
	root := filepath.Join(dir, "apply")
	if err := writeFile(root, rel, b); err != nil {
		return unsafeApply, err.Error(), nil, false
	}
	res, err := rescue.Process([]byte(patch), rescue.Options{Directory: root, NoWorktree: true, Apply: true})
	got, _ = os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		if !bytes.Equal(got, b) || countFiles(root) != 1 {
			return unsafeApply, "refused, but the directory changed: " + err.Error(), got, false
		}
		var se *rescue.Error
		if !errors.As(err, &se) || se.Kind != rescue.Verification {
			return unsafeApply, fmt.Sprintf("refused with an error that is not a verification error: %v", err), got, false
		}
		if conflict {
			return right, "", got, false
		}
		return falseRefusal, err.Error(), got, false
	}
	for _, ch := range res.Chunks {
		st.strategies[ch.Strategy]++
	}
	switch {
	case conflict:
		return unsafeApply, "applied where the merge conflicts", got, true
	case !bytes.Equal(got, merged):
		return wrongApply, "applied, but the file is not the merge: " + firstDiff(merged, got), got, true
	}
	return right, "", got, true
}

// rewrite runs the patch in rewrite mode on a fresh copy of B and applies
// what it hands on, which must give the bytes apply mode wrote. It returns
// an outcome only when rewrite mode disagrees with apply mode.
func (r *runner) rewrite(dir, rel, patch string, b, applyBytes []byte, applied bool, st *classStats) (string, string) {
	root := filepath.Join(dir, "rewrite")
	if err := writeFile(root, rel, b); err != nil {
		return unsafeApply, err.Error()
	}
	res, err := rescue.Process([]byte(patch), rescue.Options{Directory: root, NoWorktree: true})
	if got, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); !bytes.Equal(got, b) {
		return unsafeApply, "rewrite mode changed the file"
	}
	switch {
	case err != nil && applied:
		if strings.Contains(err.Error(), "Cannot express") {
			st.rewriteCannotHost++
			return "", ""
		}
		return falseRefusal, "rewrite mode refused what apply mode applied: " + err.Error()
	case err != nil:
		return "", ""
	case !applied:
		return unsafeApply, "rewrite mode handed on what apply mode refused"
	}
	if res.Decision == rescue.DecisionRewrite {
		st.rewriteRewritten++
	}
	if _, err := rescue.Process([]byte(*res.PatchText), rescue.Options{Directory: root, NoWorktree: true, Apply: true}); err != nil {
		return wrongApply, "the handed-on patch does not apply: " + err.Error()
	}
	if got, _ := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); !bytes.Equal(got, applyBytes) {
		return wrongApply, "the handed-on patch gives other bytes than apply mode: " + firstDiff(applyBytes, got)
	}
	return "", ""
}

func writeFile(root, rel string, data []byte) error {
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

func countFiles(root string) int {
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// codexPatch returns the Codex-format patch from a to c for path rel, and
// its chunk count: git's unified diff with three lines of context, one
// chunk per hunk, the hunk's function line as the @@ text, and
// "*** End of File" after a chunk whose old lines reach the end of a.
func codexPatch(dir, rel string, a, c []byte) (string, int, error) {
	fa, fc := filepath.Join(dir, "diff", "a"), filepath.Join(dir, "diff", "c")
	if err := writeFile(dir, "diff/a", a); err != nil {
		return "", 0, err
	}
	if err := writeFile(dir, "diff/c", c); err != nil {
		return "", 0, err
	}
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv",
		"--diff-algorithm=myers", "-U3", fa, fc)
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if ee := new(exec.ExitError); err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		return "", 0, fmt.Errorf("git diff: %v", err)
	}
	nA := bytes.Count(a, []byte("\n"))
	if len(a) > 0 && a[len(a)-1] != '\n' {
		nA++
	}
	var b strings.Builder
	b.WriteString("*** Begin Patch\n*** Update File: " + rel + "\n")
	chunks := 0
	oldEnd := -1
	endChunk := func() {
		if oldEnd == nA {
			b.WriteString("*** End of File\n")
		}
	}
	for _, line := range strings.SplitAfter(string(out), "\n") {
		line = strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(line, "@@ ") {
			if chunks > 0 {
				endChunk()
			}
			chunks++
			start, count, ctx, err := hunkHeader(line)
			if err != nil {
				return "", 0, err
			}
			oldEnd = start - 1 + count
			if count == 0 {
				oldEnd = start
			}
			if ctx != "" {
				b.WriteString("@@ " + ctx + "\n")
			} else {
				b.WriteString("@@\n")
			}
			continue
		}
		if chunks == 0 || line == "" || line[0] == '\\' {
			continue // the file header, the end of the output, or "\ No newline at end of file"
		}
		switch line[0] {
		case ' ', '-', '+':
			b.WriteString(line + "\n")
		}
	}
	if chunks > 0 {
		endChunk()
	}
	b.WriteString("*** End Patch\n")
	return b.String(), chunks, nil
}

// hunkHeader parses "@@ -start,count +s,c @@ text".
func hunkHeader(h string) (start, count int, ctx string, err error) {
	rest := strings.TrimPrefix(h, "@@ -")
	old, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return 0, 0, "", fmt.Errorf("bad hunk header %q", h)
	}
	count = 1
	if s, c, ok := strings.Cut(old, ","); ok {
		old = s
		if count, err = strconv.Atoi(c); err != nil {
			return 0, 0, "", fmt.Errorf("bad hunk header %q", h)
		}
	}
	if start, err = strconv.Atoi(old); err != nil {
		return 0, 0, "", fmt.Errorf("bad hunk header %q", h)
	}
	if _, after, ok := strings.Cut(rest, "@@"); ok {
		ctx = strings.TrimPrefix(after, " ")
	}
	return start, count, ctx, nil
}

// mergeFile runs git merge-file on B (current), A (base) and C (other) and
// returns the result and the number of conflicts.
func mergeFile(dir string, a, b, c []byte) ([]byte, int, error) {
	for name, data := range map[string][]byte{"merge/a": a, "merge/b": b, "merge/c": c} {
		if err := writeFile(dir, name, data); err != nil {
			return nil, 0, err
		}
	}
	m := filepath.Join(dir, "merge")
	cmd := exec.Command("git", "merge-file", "-p", "-q", filepath.Join(m, "b"), filepath.Join(m, "a"), filepath.Join(m, "c"))
	cmd.Env = gitEnv()
	out, err := cmd.Output()
	if err == nil {
		return out, 0, nil
	}
	if ee := new(exec.ExitError); errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
		return out, ee.ExitCode(), nil
	}
	return nil, 0, fmt.Errorf("git merge-file: %v", err)
}

// gitEnv keeps the user's and the system's git configuration out of the
// diff and the merge.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

func (r *runner) report(w *os.File) {
	fmt.Fprintln(w, "| class | files | chunks | right | wrong apply | false refusal | unsafe apply | rewrite mode: rewritten | rewrite mode: host cannot write | strategies (applied chunks) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	var tot classStats
	tot.outcomes = map[string]int{}
	for _, cl := range classes {
		s := r.stats[cl]
		if s == nil {
			s = &classStats{outcomes: map[string]int{}}
		}
		var strat []string
		for name, n := range s.strategies {
			strat = append(strat, fmt.Sprintf("%s %d", name, n))
		}
		sort.Strings(strat)
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n", cl, s.cases, s.chunks,
			s.outcomes[right], s.outcomes[wrongApply], s.outcomes[falseRefusal], s.outcomes[unsafeApply],
			s.rewriteRewritten, s.rewriteCannotHost, strings.Join(strat, ", "))
		tot.cases += s.cases
		tot.chunks += s.chunks
		for k, v := range s.outcomes {
			tot.outcomes[k] += v
		}
		tot.rewriteRewritten += s.rewriteRewritten
		tot.rewriteCannotHost += s.rewriteCannotHost
	}
	fmt.Fprintf(w, "| all | %d | %d | %d | %d | %d | %d | %d | %d | |\n", tot.cases, tot.chunks,
		tot.outcomes[right], tot.outcomes[wrongApply], tot.outcomes[falseRefusal], tot.outcomes[unsafeApply],
		tot.rewriteRewritten, tot.rewriteCannotHost)
}

func (r *runner) dumpCase(name, outcome, class, note, rel string, a, b, c []byte, patch string, merged, got []byte) {
	if r.dump == "" {
		return
	}
	d := filepath.Join(r.dump, fmt.Sprintf("case%04d", r.id))
	files := map[string][]byte{
		"a.go": a, "b.go": b, "c.go": c, "patch.txt": []byte(patch), "merged.go": merged, "got.go": got,
		"outcome.txt": []byte(fmt.Sprintf("%s\n%s (%s)\n%s\n", name, outcome, class, note)),
	}
	for f, data := range files {
		if err := writeFile(d, f, data); err != nil {
			fmt.Fprintln(os.Stderr, "realedits: dump:", err)
			return
		}
	}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// firstDiff names the first line where two texts differ.
func firstDiff(want, got []byte) string {
	w, g := strings.SplitAfter(string(want), "\n"), strings.SplitAfter(string(got), "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var x, y string
		if i < len(w) {
			x = w[i]
		}
		if i < len(g) {
			y = g[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: want %q, got %q", i+1, x, y)
		}
	}
	return "equal"
}
