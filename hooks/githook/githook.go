// Package githook holds the checks behind `slim git-hook pre-commit` and
// `slim git-hook pre-applypatch`: what is about to be committed (the index
// compared with HEAD) is checked for
//
//   - containment: every staged path, and the target of every staged
//     symlink, must stay inside the worktree, outside nested worktrees or
//     repositories, and outside .git; a staged gitlink must be a declared
//     submodule;
//   - EOL flips: a text file present at HEAD whose staged blob has a
//     different dominant line ending (new, deleted and binary files skipped);
//   - conflict markers: a staged text file with a line starting "<<<<<<< "
//     and a later line starting ">>>>>>> ".
//
// The checks ask the git binary for the index and the blobs, so GIT_DIR,
// GIT_WORK_TREE and GIT_INDEX_FILE (a temporary index during `git commit -a`)
// are honoured exactly as git honours them.
package githook

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/slimgate/slim/internal/gitexec"
	"github.com/slimgate/slim/worktree"
)

// Hooks are the hook names Run accepts, and the hooks slim installs shims for.
var Hooks = []string{"pre-commit", "pre-applypatch"}

// Check names carried by findings.
const (
	CheckContainment = "containment"
	CheckEOL         = "eol"
	CheckConflict    = "conflict-markers"
)

// Finding is one problem in what is about to be committed.
type Finding struct {
	Check   string `json:"check"`
	Path    string `json:"path"`
	Code    string `json:"code,omitempty"` // containment: the worktree verdict code
	Message string `json:"message"`
}

// String is the one stderr line printed for the finding.
func (f Finding) String() string { return f.Path + ": " + f.Message }

// Options tune a run.
type Options struct {
	// Dir is where git runs; "" means the current directory (git starts
	// hooks at the worktree top).
	Dir string
	// AllowNested lets paths inside nested worktrees count as inside (the
	// slim command sets it from SLIM_ALLOW_NESTED=1).
	AllowNested bool
	// MaxBlob is the largest blob read for the text checks (default 32 MiB).
	MaxBlob int64
}

// KnownHook reports whether name is a hook Run serves.
func KnownHook(name string) bool {
	for _, h := range Hooks {
		if h == name {
			return true
		}
	}
	return false
}

// entry is one line of `git diff-index --cached`.
type entry struct {
	oldMode, newMode string
	oldSHA, newSHA   string
	status           byte
	path             string // slash-separated, relative to the worktree top
}

const (
	modeGitlink = "160000"
	modeSymlink = "120000"
)

func isRegular(mode string) bool { return mode == "100644" || mode == "100755" }

// Run checks the staged changes of the repository git finds from
// opts.Dir. Both hooks check the index against HEAD: pre-applypatch runs
// after `git am` has updated the index. The error is for failures of the
// check itself, never for findings.
func Run(hook string, opts Options) ([]Finding, error) {
	if !KnownHook(hook) {
		return nil, fmt.Errorf("unknown git hook %q (known: %s)", hook, strings.Join(Hooks, ", "))
	}
	if opts.MaxBlob <= 0 {
		opts.MaxBlob = 32 << 20
	}
	g := &gitRunner{dir: opts.Dir}
	top, err := g.output("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("find the worktree top: %w", err)
	}
	top = filepath.FromSlash(strings.TrimSpace(top))
	base := "HEAD"
	if _, err := g.output("rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err != nil {
		// No commit yet: compare with the empty tree.
		empty, err := gitexec.Output("", "hash-object", "-t", "tree", "--stdin")
		if err != nil {
			return nil, fmt.Errorf("empty tree id: %w", err)
		}
		base = strings.TrimSpace(empty)
	}
	raw, err := g.output("diff-index", "--cached", "-z", "--no-renames", "--ignore-submodules=none", base)
	if err != nil {
		return nil, fmt.Errorf("list staged changes: %w", err)
	}
	entries, err := parseDiffIndex(raw)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil
	}
	guard, err := worktree.NewGuard(top, top, worktree.Options{AllowNested: opts.AllowNested})
	if err != nil {
		return nil, fmt.Errorf("containment guard for %s: %w", top, err)
	}
	blobs, err := g.catFile()
	if err != nil {
		return nil, err
	}
	defer blobs.close()

	var submodules map[string]bool
	var findings []Finding
	for _, e := range entries {
		if e.status == 'D' {
			continue
		}
		abs := filepath.Join(top, filepath.FromSlash(e.path))
		if e.newMode == modeGitlink {
			if submodules == nil {
				submodules = g.stagedSubmodulePaths()
			}
			if !submodules[e.path] {
				findings = append(findings, Finding{Check: CheckContainment, Path: e.path, Code: "nested_worktree",
					Message: "a nested repository or worktree is staged as a gitlink but is not a submodule listed in .gitmodules; unstage it (git rm --cached " + e.path + ") and keep it out of the commit, or add it with git submodule add"})
			}
			continue
		}
		// A staged symlink is checked where it lives (its directory) and,
		// below, where it points; checking abs itself would follow the link
		// on disk and report the target twice.
		where := abs
		if e.newMode == modeSymlink {
			where = filepath.Dir(abs)
		}
		if v := guard.Check(where); !v.Inside {
			findings = append(findings, containmentFinding(e.path, "the staged path", v))
		}
		switch {
		case e.newMode == modeSymlink:
			target, ok, err := blobs.read(e.newSHA, 4096)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			if f, bad := checkSymlink(guard, top, e.path, string(target)); bad {
				findings = append(findings, f)
			}
		case isRegular(e.newMode):
			staged, ok, err := blobs.read(e.newSHA, opts.MaxBlob)
			if err != nil {
				return nil, err
			}
			if !ok || isBinary(staged) {
				continue
			}
			if line := conflictLine(staged); line > 0 {
				findings = append(findings, Finding{Check: CheckConflict, Path: e.path,
					Message: fmt.Sprintf("unresolved merge conflict: a \"<<<<<<< \" marker at line %d is closed by a later \">>>>>>> \" marker; resolve the conflict, stage the file again and retry", line)})
			}
			if e.status != 'M' && e.status != 'T' || !isRegular(e.oldMode) {
				continue // new files have no EOL to flip
			}
			old, ok, err := blobs.read(e.oldSHA, opts.MaxBlob)
			if err != nil {
				return nil, err
			}
			if !ok || isBinary(old) {
				continue
			}
			was, now := dominantEOL(old), dominantEOL(staged)
			if was != "" && now != "" && was != now {
				findings = append(findings, Finding{Check: CheckEOL, Path: e.path,
					Message: fmt.Sprintf("line endings flipped from %s (HEAD) to %s (staged); restore the file's %s line endings so the diff shows only the real change, or commit the conversion on its own on purpose (git commit --no-verify)", was, now, was)})
			}
		}
	}
	return findings, nil
}

func containmentFinding(path, what string, v worktree.Verdict) Finding {
	var why string
	switch v.Code {
	case "nested_worktree":
		room := v.Room
		if room == "" {
			room = "another worktree or repository"
		}
		why = fmt.Sprintf("%s lies inside the nested worktree %s, which is a separate checkout; commit it there instead", what, room)
	case "git_dir":
		why = what + " points into the git directory; files under .git must never be committed or linked to"
	default:
		why = fmt.Sprintf("%s resolves outside the worktree (to %s); keep committed files and link targets inside the repository", what, nonEmpty(v.Physical, v.Abs))
	}
	if v.Reason != "" && v.Code != "nested_worktree" && v.Code != "git_dir" {
		why += " (" + v.Reason + ")"
	}
	return Finding{Check: CheckContainment, Path: path, Code: v.Code, Message: why}
}

// checkSymlink decides the target of a staged symlink at path (relative to
// top). A relative target is taken from the link's own directory, without
// cleaning, so the guard sees every component physically.
func checkSymlink(guard *worktree.Guard, top, path, target string) (Finding, bool) {
	if target == "" || strings.ContainsRune(target, 0) {
		return Finding{Check: CheckContainment, Path: path, Message: "the staged symlink has an empty or invalid target; remove it or point it at a file inside the repository"}, true
	}
	abs := target
	if !filepath.IsAbs(target) {
		dir := filepath.Dir(filepath.FromSlash(path))
		abs = top + string(filepath.Separator)
		if dir != "." {
			abs += dir + string(filepath.Separator)
		}
		abs += filepath.FromSlash(target)
	}
	v := guard.Check(abs)
	if v.Inside {
		return Finding{}, false
	}
	f := containmentFinding(path, "the staged symlink's target "+strconv.Quote(target), v)
	return f, true
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// parseDiffIndex parses `git diff-index -z` output:
// ":<old mode> <new mode> <old sha> <new sha> <status>\0<path>\0" records.
func parseDiffIndex(raw string) ([]entry, error) {
	var out []entry
	parts := strings.Split(raw, "\x00")
	for i := 0; i+1 < len(parts); i += 2 {
		meta := parts[i]
		if meta == "" {
			break
		}
		f := strings.Fields(strings.TrimPrefix(meta, ":"))
		if !strings.HasPrefix(meta, ":") || len(f) != 5 || f[4] == "" {
			return nil, fmt.Errorf("unexpected git diff-index record %q", meta)
		}
		out = append(out, entry{oldMode: f[0], newMode: f[1], oldSHA: f[2], newSHA: f[3], status: f[4][0], path: parts[i+1]})
	}
	return out, nil
}

// dominantEOL returns "LF", "CRLF" or "CR": the line ending that occurs
// strictly more often than each of the others, or "" when the text has no
// line ending or no single one dominates.
func dominantEOL(b []byte) string {
	crlf := bytes.Count(b, []byte("\r\n"))
	lf := bytes.Count(b, []byte("\n")) - crlf
	cr := bytes.Count(b, []byte("\r")) - crlf
	switch {
	case crlf > lf && crlf > cr:
		return "CRLF"
	case lf > crlf && lf > cr:
		return "LF"
	case cr > crlf && cr > lf:
		return "CR"
	}
	return ""
}

// isBinary uses git's own rule: a NUL byte in the first 8000 bytes.
func isBinary(b []byte) bool {
	if len(b) > 8000 {
		b = b[:8000]
	}
	return bytes.IndexByte(b, 0) >= 0
}

// conflictLine returns the 1-based line of the first "<<<<<<< " line that a
// later ">>>>>>> " line closes, or 0.
func conflictLine(b []byte) int {
	open := 0
	n := 0
	for len(b) > 0 {
		n++
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		switch {
		case open == 0 && bytes.HasPrefix(line, []byte("<<<<<<< ")):
			open = n
		case open > 0 && bytes.HasPrefix(line, []byte(">>>>>>> ")):
			return open
		}
	}
	return 0
}

// gitRunner runs git subprocesses in one directory with the inherited
// environment (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE included).
type gitRunner struct{ dir string }

func (g *gitRunner) output(args ...string) (string, error) { return gitexec.Output(g.dir, args...) }

// stagedSubmodulePaths lists the submodule paths declared in the staged
// .gitmodules (empty when there is none).
func (g *gitRunner) stagedSubmodulePaths() map[string]bool {
	paths := map[string]bool{}
	out, err := g.output("config", "--blob", ":.gitmodules", "--get-regexp", `^submodule\..*\.path$`)
	if err != nil {
		return paths
	}
	for _, line := range strings.Split(out, "\n") {
		if _, p, ok := strings.Cut(strings.TrimSpace(line), " "); ok {
			paths[p] = true
		}
	}
	return paths
}

// blobReader reads blobs through one `git cat-file --batch` process.
type blobReader struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (g *gitRunner) catFile() (*blobReader, error) {
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir = g.dir
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &blobReader{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// read returns the blob's bytes; ok is false when the blob is larger than
// limit (its bytes are skipped).
func (r *blobReader) read(sha string, limit int64) (data []byte, ok bool, err error) {
	if _, err := io.WriteString(r.in, sha+"\n"); err != nil {
		return nil, false, fmt.Errorf("git cat-file: %w", err)
	}
	header, err := r.out.ReadString('\n')
	if err != nil {
		return nil, false, fmt.Errorf("git cat-file %s: %w", sha, err)
	}
	f := strings.Fields(header)
	if len(f) == 2 && f[1] == "missing" {
		return nil, false, fmt.Errorf("git cat-file: object %s is missing", sha)
	}
	if len(f) != 3 {
		return nil, false, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return nil, false, fmt.Errorf("git cat-file: bad size in %q", header)
	}
	if size > limit {
		if _, err := r.out.Discard(int(size) + 1); err != nil {
			return nil, false, fmt.Errorf("git cat-file %s: %w", sha, err)
		}
		return nil, false, nil
	}
	data = make([]byte, size+1)
	if _, err := io.ReadFull(r.out, data); err != nil {
		return nil, false, fmt.Errorf("git cat-file %s: %w", sha, err)
	}
	if data[size] != '\n' {
		return nil, false, errors.New("git cat-file: object not followed by a newline")
	}
	return data[:size], true, nil
}

func (r *blobReader) close() {
	r.in.Close()
	r.cmd.Wait()
}
