package worktree

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxDotGitSize bounds how much of a `.git` file, `commondir` file or
// `.gitmodules` file is read: these are a line or a few lines long.
const maxDotGitSize = 64 << 10

// Resolve resolves dir to the checkout it belongs to. It honours GIT_DIR,
// GIT_WORK_TREE, GIT_COMMON_DIR and GIT_INDEX_FILE from the process
// environment, and otherwise walks up from dir looking for a `.git` entry
// with lstat, reading `.git` files and `commondir` itself. It never runs git
// and never opens the repository's objects.
//
// Those four variables are git's own protocol, not slim settings: git sets
// them for the hooks it runs, and every git command run in that process
// obeys them, so Resolve reads them from the process as git would. They are
// the only environment the package reads.
//
// A linked worktree whose admin directory is gone (prunable), or a git dir
// whose common dir is missing, is reported in Notes and resolved as
// directory-only (Kind none, no Worktree); that is not an error. Errors are
// returned only when dir itself cannot be resolved.
func Resolve(dir string) (*Info, error) {
	return resolveEnv(dir, os.Getenv)
}

// resolveEnv is Resolve with the environment given as a lookup function.
func resolveEnv(dir string, getenv func(string) string) (*Info, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	phys, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	fi, err := os.Stat(phys)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	if !fi.IsDir() {
		phys = filepath.Dir(phys)
	}
	info := &Info{Directory: phys, Kind: KindNone}
	if gd := getenv("GIT_DIR"); gd != "" {
		resolveFromEnv(info, gd, getenv)
	} else {
		discover(info)
	}
	if info.Worktree == string(filepath.Separator) || info.Worktree == filepath.VolumeName(info.Worktree)+string(filepath.Separator) {
		info.Worktree = ""
	}
	if info.Kind == KindSubmodule || info.Kind == KindMain || info.Kind == KindLinked {
		if info.Worktree == "" {
			info.Kind = KindNone
		}
	}
	if info.GitDir != "" {
		if idx := getenv("GIT_INDEX_FILE"); idx != "" {
			cwd, err := os.Getwd()
			if err != nil {
				cwd = info.Directory
			}
			info.IndexFile = physicalOrAbs(cwd, idx)
		} else {
			info.IndexFile = filepath.Join(info.GitDir, "index")
		}
	}
	return info, nil
}

// physicalOrAbs returns the physical form of p when it exists, else p made
// absolute against base and cleaned.
func physicalOrAbs(base, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// resolveFromEnv handles GIT_DIR (and GIT_WORK_TREE, GIT_COMMON_DIR). As in
// git, relative values are taken against the current working directory, and
// without GIT_WORK_TREE the working directory is the top level, unless the
// git dir's config says core.worktree or core.bare.
func resolveFromEnv(info *Info, gitDirEnv string, getenv func(string) string) {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = info.Directory
	}
	gitDir := physicalOrAbs(cwd, gitDirEnv)
	if st, err := os.Stat(gitDir); err == nil && !st.IsDir() {
		// GIT_DIR may name a gitfile.
		if target, err := readGitFile(gitDir); err == nil {
			gitDir = physicalOrAbs(filepath.Dir(gitDir), target)
		}
	}
	if _, err := os.Stat(gitDir); err != nil {
		info.Notes = append(info.Notes, fmt.Sprintf("GIT_DIR %s does not exist; resolved as a plain directory", gitDir))
		return
	}
	info.GitDir = gitDir
	info.CommonDir = commonDirOf(info, gitDir, getenv("GIT_COMMON_DIR"), cwd)
	if info.CommonDir == "" {
		info.GitDir = ""
		return
	}
	cfg := readCoreConfig(filepath.Join(info.CommonDir, "config"))
	switch {
	case getenv("GIT_WORK_TREE") != "":
		info.Worktree = physicalOrAbs(cwd, getenv("GIT_WORK_TREE"))
	case cfg.worktree != "":
		info.Worktree = physicalOrAbs(gitDir, cfg.worktree)
	case cfg.bare:
		info.Kind = KindNone
		return
	default:
		// As git does: the working directory is the top level.
		if wd, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = wd
		}
		info.Worktree = cwd
	}
	info.Kind = kindOf(info, gitDir)
}

// commonDirOf finds the common dir of gitDir: GIT_COMMON_DIR when given, else
// the `commondir` file, else gitDir itself. It returns "" (with a note) when
// the common dir is missing: the repository is incomplete.
func commonDirOf(info *Info, gitDir, env, cwd string) string {
	common := gitDir
	if env != "" {
		common = physicalOrAbs(cwd, env)
	} else if b, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		line := firstLine(b)
		if line != "" {
			common = physicalOrAbs(gitDir, line)
		}
	}
	if st, err := os.Stat(common); err != nil || !st.IsDir() {
		info.Notes = append(info.Notes, fmt.Sprintf("incomplete repository: common dir %s of git dir %s is missing; resolved as a plain directory", common, gitDir))
		return ""
	}
	return common
}

// discover walks up from info.Directory looking for a `.git` entry, or for
// a directory that is itself a git dir (bare repository, or inside .git).
// The file system root is never taken as a worktree.
func discover(info *Info) {
	for d := info.Directory; ; {
		parent := filepath.Dir(d)
		if parent == d {
			return // the root: never a worktree
		}
		dotgit := filepath.Join(d, ".git")
		st, err := os.Lstat(dotgit)
		switch {
		case err == nil:
			if found := fromDotGit(info, d, dotgit, st); found {
				return
			}
		case !errors.Is(err, fs.ErrNotExist):
			info.Notes = append(info.Notes, fmt.Sprintf("cannot inspect %s: %v", dotgit, err))
			return
		}
		if isGitDir(d) {
			// A bare repository, or a directory inside a git dir.
			info.GitDir = d
			info.CommonDir = commonDirOf(info, d, "", d)
			if info.CommonDir == "" {
				info.GitDir = ""
			}
			info.Kind = KindNone
			return
		}
		d = parent
	}
}

// fromDotGit fills info from the `.git` entry found in top. It reports
// whether the search ends here.
func fromDotGit(info *Info, top, dotgit string, st fs.FileInfo) bool {
	if st.Mode()&fs.ModeSymlink != 0 {
		// Follow a symlinked .git (git does too).
		s, err := os.Stat(dotgit)
		if err != nil {
			info.Notes = append(info.Notes, fmt.Sprintf("%s is a dangling link; resolved as a plain directory", dotgit))
			return true
		}
		st = s
	}
	var gitDir string
	if st.IsDir() {
		gitDir = dotgit
	} else {
		target, err := readGitFile(dotgit)
		if err != nil {
			info.Notes = append(info.Notes, fmt.Sprintf("%s: %v; resolved as a plain directory", dotgit, err))
			return true
		}
		gitDir = physicalOrAbs(top, target)
		if s, err := os.Stat(gitDir); err != nil || !s.IsDir() {
			info.Notes = append(info.Notes, fmt.Sprintf("prunable worktree: %s points to %s, which is missing (run 'git worktree prune' or 'git worktree repair'); resolved as a plain directory", dotgit, gitDir))
			return true
		}
	}
	if r, err := filepath.EvalSymlinks(gitDir); err == nil {
		gitDir = r
	}
	info.GitDir = gitDir
	info.CommonDir = commonDirOf(info, gitDir, "", top)
	if info.CommonDir == "" {
		info.GitDir = ""
		return true
	}
	cfg := readCoreConfig(filepath.Join(info.CommonDir, "config"))
	if st.IsDir() && cfg.bare {
		// A `.git` directory that says it is bare: no worktree.
		info.Kind = KindNone
		return true
	}
	info.Worktree = top
	info.Kind = kindOf(info, gitDir)
	return true
}

// kindOf classifies a checkout with a known git dir and worktree, and fills
// Superproject for submodules.
func kindOf(info *Info, gitDir string) Kind {
	if !sameDir(info.CommonDir, gitDir) {
		return KindLinked
	}
	if super := findSuperproject(info.Worktree, gitDir); super != "" {
		info.Superproject = super
		return KindSubmodule
	}
	return KindMain
}

// findSuperproject looks for the repository that holds top as a submodule:
// walking up from top's parent to the first `.git`, it accepts it when
// gitDir lies under that repository's modules directory (git dir or common
// dir), or when its .gitmodules lists top's path.
func findSuperproject(top, gitDir string) string {
	if top == "" {
		return ""
	}
	sup := &Info{Directory: filepath.Dir(top), Kind: KindNone}
	if sup.Directory == top {
		return ""
	}
	discoverNoSuper(sup)
	if sup.Worktree == "" || sup.GitDir == "" {
		return ""
	}
	for _, base := range []string{sup.GitDir, sup.CommonDir} {
		if within(filepath.Join(base, "modules"), gitDir) {
			return sup.Worktree
		}
	}
	rel, err := filepath.Rel(sup.Worktree, top)
	if err != nil {
		return ""
	}
	if listsSubmodulePath(filepath.Join(sup.Worktree, ".gitmodules"), filepath.ToSlash(rel)) {
		return sup.Worktree
	}
	return ""
}

// discoverNoSuper is discover without the superproject step (which would
// recurse all the way up); it only needs the worktree and git dirs.
func discoverNoSuper(info *Info) {
	for d := info.Directory; ; {
		parent := filepath.Dir(d)
		if parent == d {
			return
		}
		dotgit := filepath.Join(d, ".git")
		st, err := os.Stat(dotgit)
		if err == nil {
			gitDir := dotgit
			if !st.IsDir() {
				target, err := readGitFile(dotgit)
				if err != nil {
					return
				}
				gitDir = physicalOrAbs(d, target)
			}
			info.GitDir = gitDir
			info.CommonDir = gitDir
			if b, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil && firstLine(b) != "" {
				info.CommonDir = physicalOrAbs(gitDir, firstLine(b))
			}
			info.Worktree = d
			return
		} else if !errors.Is(err, fs.ErrNotExist) {
			return
		}
		d = parent
	}
}

// listsSubmodulePath reports whether the .gitmodules file names rel as a
// submodule path ("path = rel").
func listsSubmodulePath(gitmodules, rel string) bool {
	b, err := readSmall(gitmodules)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "path" && strings.Trim(strings.TrimSpace(v), `"`) == rel {
			return true
		}
	}
	return false
}

// readGitFile reads a `.git` file: "gitdir: <path>" on the first line,
// trailing CR and spaces ignored.
func readGitFile(p string) (string, error) {
	b, err := readSmall(p)
	if err != nil {
		return "", err
	}
	return parseGitFile(b)
}

// parseGitFile parses the contents of a `.git` file.
func parseGitFile(b []byte) (string, error) {
	line := firstLine(b)
	rest, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("not a gitfile (no \"gitdir:\" line)")
	}
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return "", fmt.Errorf("empty gitdir line")
	}
	return rest, nil
}

// firstLine returns the first line of b without its terminator and without
// surrounding white space (CRLF files and trailing blanks included).
func firstLine(b []byte) string {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(string(b))
}

// readSmall reads at most maxDotGitSize bytes of a regular file. It looks
// before it opens and opens without blocking, so a named pipe planted as
// `.git` (next to the worktree or in a parent directory) cannot hang the
// resolver.
func readSmall(p string) ([]byte, error) {
	if st, err := os.Stat(p); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, maxDotGitSize))
}

// isGitDir reports whether d looks like a git directory: HEAD, objects and
// refs present (git's own test, minus validating HEAD's content).
func isGitDir(d string) bool {
	if st, err := os.Stat(filepath.Join(d, "HEAD")); err != nil || !st.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		if st, err := os.Stat(filepath.Join(d, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// coreConfig is the part of a repository's config that resolution needs.
type coreConfig struct {
	bare     bool
	worktree string
}

// readCoreConfig reads core.bare and core.worktree from a git config file
// with a small line parser (no includes; quotes around values dropped).
func readCoreConfig(p string) coreConfig {
	b, err := readSmall(p)
	if err != nil {
		return coreConfig{}
	}
	return parseCoreConfig(b)
}

// parseCoreConfig parses core.bare and core.worktree from config text.
func parseCoreConfig(b []byte) coreConfig {
	var c coreConfig
	inCore := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			name := strings.TrimSpace(strings.Trim(line, "[]"))
			inCore = strings.EqualFold(name, "core")
			continue
		}
		if !inCore {
			continue
		}
		k, v, _ := strings.Cut(line, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch k {
		case "bare":
			c.bare = strings.EqualFold(v, "true") || v == "1" || strings.EqualFold(v, "yes") || strings.EqualFold(v, "on")
		case "worktree":
			c.worktree = v
		}
	}
	return c
}

// sameDir reports whether a and b name the same directory, by path or by
// file identity.
func sameDir(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// within reports whether p equals dir or lies below it, lexically (both
// physical).
func within(dir, p string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
