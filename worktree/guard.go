package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/slimgate/slim/internal/safefs"
	"github.com/slimgate/slim/worktree/hostpath"
)

// Guard decides whether targets lie inside a session's allowed area: the
// session directory plus the worktree top level. A Guard is safe for
// concurrent use.
type Guard struct {
	flavor hostpath.Flavor
	opts   Options

	rawDir, rawWT string // the host's spelling, normalised lexically
	dir, wt       string // physical; wt is "" when there is no worktree
	dirFI, wtFI   fs.FileInfo
	top           string
	gitDirs       []string // physical git dir and common dir

	foldOnce sync.Once
	fold     bool // names compare without case at the top (probed lazily)
}

// NewGuard returns the guard for the allowed area: directory (required,
// absolute in the flavor of opts) plus worktree, "" when there is none (as
// in Info.Worktree). A host's own spelling of "none", "/" or `\`, is read
// the same way, so a host's value can be passed on as it came. Both are
// resolved physically once; both must exist. The git dir and common dir
// refused for writes come from opts; the `.git` entry at the top is refused
// as well.
func NewGuard(directory, worktree string, opts Options) (*Guard, error) {
	f := opts.Flavor.Concrete()
	g := &Guard{flavor: f, opts: opts}
	if directory == "" {
		return nil, fmt.Errorf("worktree guard: the session directory is required")
	}
	if strings.IndexByte(directory, 0) >= 0 || strings.IndexByte(worktree, 0) >= 0 {
		return nil, fmt.Errorf("worktree guard: directory or worktree contains a NUL byte")
	}
	if !f.IsAbs(directory) {
		return nil, fmt.Errorf("worktree guard: directory %q is not absolute", directory)
	}
	g.rawDir = f.Resolve(directory, directory)
	var err error
	if g.dir, g.dirFI, err = physicalDir(g.rawDir); err != nil {
		return nil, fmt.Errorf("worktree guard: directory: %w", err)
	}
	g.top = g.dir
	if !isNoWorktree(worktree) {
		if !f.IsAbs(worktree) {
			return nil, fmt.Errorf("worktree guard: worktree %q is not absolute", worktree)
		}
		g.rawWT = f.Resolve(worktree, worktree)
		if g.wt, g.wtFI, err = physicalDir(g.rawWT); err != nil {
			return nil, fmt.Errorf("worktree guard: worktree: %w", err)
		}
		g.top = g.wt
	}
	for _, d := range []string{opts.GitDir, opts.CommonDir} {
		if d != "" {
			g.addGitDir(d)
		}
	}
	// The `.git` entry at the top is refused too, whatever the resolver
	// found: a host may name a worktree other than the one GIT_DIR points
	// at.
	{
		info := &Info{Directory: g.top}
		dotgit := filepath.Join(g.top, ".git")
		if st, err := os.Lstat(dotgit); err == nil {
			fromDotGit(info, g.top, dotgit, st)
			g.addGitDir(info.GitDir)
			g.addGitDir(info.CommonDir)
		}
	}
	return g, nil
}

// isNoWorktree reports whether a worktree value means "none": "" as the
// library spells it, "/" or `\` as a host does.
func isNoWorktree(wt string) bool {
	return wt == "" || wt == "/" || wt == `\`
}

func (g *Guard) addGitDir(d string) {
	if d == "" {
		return
	}
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	for _, have := range g.gitDirs {
		if have == d {
			return
		}
	}
	g.gitDirs = append(g.gitDirs, d)
}

// physicalDir resolves an existing directory to its physical path.
func physicalDir(p string) (string, fs.FileInfo, error) {
	res, err := walkPath(p)
	if err != nil {
		return "", nil, err
	}
	if len(res.tail) > 0 {
		return "", nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	fi, err := os.Stat(res.existing)
	if err != nil {
		return "", nil, err
	}
	if !fi.IsDir() {
		return "", nil, fmt.Errorf("%s is not a directory", p)
	}
	return res.existing, fi, nil
}

// Top is the physical top of the allowed area: the worktree top level, else
// the directory. Open os.Root here for writes.
func (g *Guard) Top() string { return g.top }

// TopInfo is the identity (os.Stat) of Top as NewGuard resolved it. A
// writer that opens Top compares the opened directory with it, so a top
// swapped for a link after the check is refused.
func (g *Guard) TopInfo() fs.FileInfo {
	if g.wtFI != nil {
		return g.wtFI
	}
	return g.dirFI
}

// Directory is the physical session directory.
func (g *Guard) Directory() string { return g.dir }

// Worktree is the physical worktree top level, "" when there is none.
func (g *Guard) Worktree() string { return g.wt }

// RelToTop returns v's physical path relative to Top, for os.Root
// operations opened at Top. It fails for a verdict that is not inside, or
// that is inside only through a directory that lies outside the worktree.
func (g *Guard) RelToTop(v Verdict) (string, error) {
	if !v.Inside {
		return "", fmt.Errorf("%s is not inside the allowed area", v.Input)
	}
	if v.Root != g.top {
		return "", fmt.Errorf("%s lies in %s, not below %s", v.Input, v.Root, g.top)
	}
	return v.Rel, nil
}

// Check decides one target; relative targets resolve against the session
// directory, as the host resolves them.
func (g *Guard) Check(target string) Verdict {
	v := Verdict{Input: target}
	if strings.IndexByte(target, 0) >= 0 {
		v.Abs, v.Physical = target, target
		return g.outside(v, CodeOutside, "the path contains a NUL byte")
	}
	if why := invalidPath(g.flavor, target); why != "" {
		v.Abs, v.Physical = target, target
		return g.outside(v, CodeInvalidPath, why)
	}
	v.Abs = g.flavor.Resolve(g.rawDir, target)
	if why := invalidPath(g.flavor, v.Abs); why != "" {
		v.Physical = v.Abs
		return g.outside(v, CodeInvalidPath, why)
	}
	if g.flavor == hostpath.Win32 && runtime.GOOS == "windows" && isOtherDriveRelative(target, g.rawDir) {
		// "D:x" from a session on C: uses drive D's own working directory,
		// which only the OS knows (Node reads the same "=D:" variable).
		if a, err := filepath.Abs(target); err == nil {
			v.Abs = a
		}
	}
	v.Physical = v.Abs
	v.BySpelling = !g.lexicallyInside(v.Abs)
	if g.flavor == hostpath.Win32 {
		if why := winNameProblem(v.Abs); why != "" {
			return g.outside(v, CodeOutside, why)
		}
	}
	res, err := g.walk(v.Abs)
	if err != nil {
		return g.outside(v, CodeOutside, fmt.Sprintf("the path cannot be resolved: %v", err))
	}
	v.Physical = res.physical()
	for _, gd := range g.gitDirs {
		if hasPathPrefix(v.Physical, gd) {
			return g.outside(v, CodeGitDir, "the path lies inside the repository's git directory "+gd+", which is refused for writes")
		}
	}
	loc, ok := g.locate(res)
	if !ok {
		why := "the path lies outside " + g.areaWords()
		if res.viaLink && !v.BySpelling {
			why = "the path passes through a symbolic link that leads outside " + g.areaWords()
		}
		return g.outside(v, CodeOutside, why)
	}
	for _, c := range loc.rel {
		if c == ".git" || (strings.EqualFold(c, ".git") && g.caseFolds()) {
			return g.outside(v, CodeGitDir, "the path goes through a .git directory, which is refused for writes")
		}
	}
	if !g.opts.AllowNested {
		if room := findRoom(loc.roomBase, loc.roomRel, loc.roomExisting); room != "" {
			v.Room = room
			return g.outside(v, CodeNested, "the path lies inside "+room+", a separate worktree, submodule or repository nested in this one")
		}
	}
	v.Inside = true
	v.BySpelling = false
	v.Root = loc.root
	v.Rel = filepath.Join(loc.rel...)
	if v.Rel == "" {
		v.Rel = "."
	}
	if res.last != nil && res.last.Mode().IsRegular() {
		if n := linkCount(res.last); n > 1 {
			v.Warnings = append(v.Warnings, fmt.Sprintf("%s has %d hard links: its data is shared with %d other path(s), possibly outside the area; a write in place changes them too, while slim's own writes replace this name and leave the other links with the old bytes", v.Physical, n, n-1))
		}
	}
	return v
}

// Limits of the file systems slim writes to: a name is at most 255 bytes
// (UTF-16 units on Windows) and a path at most the system's PATH_MAX.
const maxNameLen = 255

func maxPathLen() int {
	switch runtime.GOOS {
	case "darwin", "ios":
		return 1024
	case "windows":
		return 32767
	}
	return 4096
}

// invalidPath says why p can name no file here, or "": not valid UTF-8 (a
// host decodes the patch as UTF-8, so it would write another name than
// the one checked, and file contents are held to the same rule), a
// component longer than a name may be, or a path longer than the system
// allows. The answer is the same whether or not the path exists.
func invalidPath(f hostpath.Flavor, p string) string {
	if !utf8.ValidString(p) {
		return "the path is not valid UTF-8"
	}
	if len(p) >= maxPathLen() {
		return fmt.Sprintf("the path is %d bytes long; the system allows at most %d", len(p), maxPathLen()-1)
	}
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && !f.IsSep(p[i]) {
			continue
		}
		c := p[start:i]
		start = i + 1
		n := len(c)
		if f == hostpath.Win32 {
			n = len(utf16.Encode([]rune(c)))
		}
		if n > maxNameLen {
			show := c
			if len(show) > 40 {
				show = show[:40] + "..."
			}
			return fmt.Sprintf("the file name %q is %d bytes long; a name may have at most %d (file name too long)", show, n, maxNameLen)
		}
	}
	return ""
}

// isOtherDriveRelative reports whether p is drive-relative ("D:x") on a
// drive other than dir's.
func isOtherDriveRelative(p, dir string) bool {
	if len(p) < 2 || p[1] != ':' || (len(p) > 2 && (p[2] == '\\' || p[2] == '/')) {
		return false
	}
	return len(dir) < 2 || !strings.EqualFold(p[:1], dir[:1])
}

func (g *Guard) outside(v Verdict, code, why string) Verdict {
	v.Inside = false
	v.Code = code
	v.Reason = why
	if code != CodeOutside {
		v.BySpelling = false
	}
	return v
}

func (g *Guard) areaWords() string {
	if g.wt != "" && g.wt != g.dir {
		return "the session directory " + g.dir + " and the worktree " + g.wt
	}
	return g.top
}

// lexicallyInside is the host's own view: abs relative to the directory or
// the worktree, in the host's spelling, does not climb out.
func (g *Guard) lexicallyInside(abs string) bool {
	if relInside(g.flavor, g.rawDir, abs) {
		return true
	}
	return g.rawWT != "" && relInside(g.flavor, g.rawWT, abs)
}

func relInside(f hostpath.Flavor, root, abs string) bool {
	rel := f.Relative(root, abs)
	if rel == "" {
		return true
	}
	if f.IsAbs(rel) || (len(rel) > 1 && rel[1] == ':') {
		return false
	}
	first := rel
	for i := 0; i < len(rel); i++ {
		if f.IsSep(rel[i]) {
			first = rel[:i]
			break
		}
	}
	return first != ".."
}

// walk resolves abs physically. When abs starts with the host's spelling of
// the directory or worktree, the walk starts from its physical form, which
// NewGuard resolved already.
func (g *Guard) walk(abs string) (walkResult, error) {
	native := abs
	if g.flavor == hostpath.Win32 && filepath.Separator == '/' {
		// A win32 host path on a posix machine cannot be walked: it names no
		// file here. Report it as is; it will be outside.
		return walkResult{existing: native}, errors.New("a win32 path cannot be resolved on this system")
	}
	for _, b := range [][2]string{{g.rawDir, g.dir}, {g.rawWT, g.wt}} {
		if b[0] != "" && hasPathPrefix(native, b[0]) {
			return walkFrom(b[1], splitComponents(native[len(b[0]):]))
		}
	}
	return walkPath(native)
}

// location is where a physical path lies in the area.
type location struct {
	root string   // g.top, or g.dir when inside the directory only
	rel  []string // components below root
	// roomBase is where the search for nested rooms starts: the directory
	// when the path is inside it (the session lives there), else the top.
	roomBase     string
	roomRel      []string
	roomExisting int // how many of roomRel exist on disk
}

// locate finds the area root holding res, by byte prefix first and by file
// identity of the existing ancestors otherwise.
func (g *Guard) locate(res walkResult) (location, bool) {
	phys := res.physical()
	var relDir, relWT []string
	inDir, inWT := false, false
	if hasPathPrefix(phys, g.dir) {
		inDir, relDir = true, splitComponents(phys[len(g.dir):])
	}
	if g.wt != "" && hasPathPrefix(phys, g.wt) {
		inWT, relWT = true, splitComponents(phys[len(g.wt):])
	}
	if !inDir && (!inWT || g.wt == "") {
		// Slow path: compare the existing ancestors with the roots by
		// identity (case, Unicode normalisation, 8.3 names, bind mounts).
		var up []string // components from the ancestor down to existing
		for a := res.existing; ; {
			if st, err := os.Stat(a); err == nil {
				rel := append(reversed(up), res.tail...)
				if !inDir && os.SameFile(st, g.dirFI) {
					inDir, relDir = true, rel
				}
				if g.wtFI != nil && !inWT && os.SameFile(st, g.wtFI) {
					inWT, relWT = true, rel
				}
			}
			parent := filepath.Dir(a)
			if parent == a || (inDir && (inWT || g.wtFI == nil)) {
				break
			}
			up = append(up, filepath.Base(a))
			a = parent
		}
	}
	if !inDir && !inWT {
		return location{}, false
	}
	var loc location
	if inWT {
		loc.root, loc.rel = g.wt, relWT
	} else {
		loc.root, loc.rel = g.dir, relDir
	}
	if inDir {
		loc.roomBase, loc.roomRel = g.dir, relDir
	} else {
		loc.roomBase, loc.roomRel = g.wt, relWT
	}
	loc.roomExisting = len(loc.roomRel) - len(res.tail)
	if loc.roomExisting < 0 {
		loc.roomExisting = 0
	}
	return loc, true
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// findRoom returns the first existing directory strictly below base, along
// rel, that holds a `.git` entry: a nested linked worktree, a submodule or
// a nested repository.
func findRoom(base string, rel []string, existing int) string {
	p := base
	for i := 0; i < existing && i < len(rel); i++ {
		p = filepath.Join(p, rel[i])
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			return p
		}
	}
	return ""
}

// caseFolds reports whether names at the top compare without case (a
// case-insensitive volume), probing once.
func (g *Guard) caseFolds() bool {
	g.foldOnce.Do(func() { g.fold = caseInsensitiveAt(g.top) })
	return g.fold
}

// caseInsensitiveAt probes whether the volume holding dir ignores case: it
// flips the case of the deepest component with a letter and compares file
// identities.
func caseInsensitiveAt(dir string) bool {
	st, err := os.Stat(dir)
	if err != nil {
		return false
	}
	for d := dir; ; {
		base := filepath.Base(d)
		flipped := flipCase(base)
		if flipped != base {
			alt := filepath.Join(filepath.Dir(d), flipped)
			if d != dir {
				rest, _ := filepath.Rel(d, dir)
				alt = filepath.Join(alt, rest)
			}
			ast, err := os.Stat(alt)
			return err == nil && os.SameFile(st, ast)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

func flipCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

// winNameProblem rejects names Windows would not store as spelled: reserved
// device names, alternate data streams (a colon after the volume) and
// trailing dots or spaces.
func winNameProblem(abs string) string {
	rest := abs
	if len(rest) >= 2 && rest[1] == ':' {
		rest = rest[2:]
	} else if strings.HasPrefix(rest, `\\`) {
		// UNC or device path: skip the two root parts.
		parts := strings.SplitN(strings.TrimLeft(rest, `\/`), `\`, 3)
		if len(parts) == 3 {
			rest = parts[2]
		} else {
			rest = ""
		}
	}
	for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return r == '\\' || r == '/' }) {
		if c == "." || c == ".." {
			continue
		}
		if strings.ContainsRune(c, ':') {
			return fmt.Sprintf("the component %q names an alternate data stream", c)
		}
		if strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ") {
			return fmt.Sprintf("the component %q ends in a dot or space, which Windows drops", c)
		}
		stem := c
		if i := strings.IndexByte(stem, '.'); i >= 0 {
			stem = stem[:i]
		}
		stem = strings.TrimRight(stem, " ")
		if isWinDeviceName(stem) {
			return fmt.Sprintf("the component %q is a reserved Windows device name", c)
		}
	}
	return ""
}

func isWinDeviceName(s string) bool {
	u := strings.ToUpper(s)
	switch u {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(u) == 4 && (strings.HasPrefix(u, "COM") || strings.HasPrefix(u, "LPT")) && u[3] >= '0' && u[3] <= '9' {
		return true
	}
	if (strings.HasPrefix(u, "COM") || strings.HasPrefix(u, "LPT")) && (u[3:] == "\u00b9" || u[3:] == "\u00b2" || u[3:] == "\u00b3") {
		return true
	}
	return false
}

// BlockError returns the *BlockedError for a verdict that is not inside,
// worded for tool (for example "apply_patch"); nil for a verdict that is
// inside.
func (g *Guard) BlockError(tool string, v Verdict) error {
	if v.Inside {
		return nil
	}
	target := v.Physical
	if target == "" {
		target = v.Abs
	}
	var msg string
	switch v.Code {
	case CodeInvalidPath:
		msg = fmt.Sprintf("%s validation failed: %s: %s", tool, v.Reason, target)
	case CodeGitDir:
		msg = fmt.Sprintf("%s blocked: patch writes inside the git directory: %s", tool, target)
	case CodeNested:
		msg = fmt.Sprintf("%s blocked: patch contains path inside nested worktree %s: %s", tool, v.Room, target)
	default:
		v.Code = CodeOutside
		msg = fmt.Sprintf("%s blocked: patch contains path outside workspace root: %s", tool, target)
	}
	return &BlockedError{Verdict: v, Message: msg}
}

// NewSessionGuard is the guard of a session in directory, fed by one
// resolver: worktree.Resolve finds the worktree (unless the caller names
// one, or says with noWorktree that there is none) and the git dir and
// common dir, which stay refused for writes even when the directory lies
// inside them (a root in .git, a bare repository, GIT_DIR elsewhere).
// opts.GitDir and opts.CommonDir are ignored: the resolver sets them.
func NewSessionGuard(directory, worktree string, noWorktree bool, opts Options) (*Guard, error) {
	if noWorktree {
		worktree = ""
	}
	opts.GitDir, opts.CommonDir = "", ""
	if info, err := Resolve(directory); err == nil {
		if worktree == "" && !noWorktree {
			worktree = info.Worktree
		}
		opts.GitDir, opts.CommonDir = info.GitDir, info.CommonDir
	}
	return NewGuard(directory, worktree, opts)
}

// OpenTree opens Top once for reads and writes through directory handles
// (see internal/safefs): the opened directory must be the one NewGuard
// resolved, the git dirs are refused by identity, and so are nested
// repositories below the session directory unless AllowNested.
func (g *Guard) OpenTree() (*safefs.Tree, error) {
	var deny []fs.FileInfo
	for _, d := range g.gitDirs {
		if fi, err := os.Stat(d); err == nil {
			deny = append(deny, fi)
		}
	}
	session := ""
	if rel, err := filepath.Rel(g.top, g.dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		session = rel
	}
	return safefs.Open(g.top, g.TopInfo(), safefs.Options{Deny: deny, AllowNested: g.opts.AllowNested, Session: session})
}
