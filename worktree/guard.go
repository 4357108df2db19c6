package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/slimgate/slim/internal/slimerr"
)

// Guard decides whether targets lie inside a session's allowed area.
type Guard struct {
	directory string // physical
	worktree  string // physical, "" when none
	top       string
	opts      Options
}

// NewGuard returns the guard for the allowed area: directory (required,
// absolute) plus worktree ("" or "/" means none). Both are resolved
// physically once.
func NewGuard(directory, worktree string, opts Options) (*Guard, error) {
	if directory == "" {
		return nil, fmt.Errorf("worktree guard: directory is required")
	}
	dir, err := filepath.EvalSymlinks(directory)
	if err != nil {
		return nil, fmt.Errorf("worktree guard: directory %s: %w", directory, err)
	}
	g := &Guard{directory: dir, top: dir, opts: opts}
	if worktree != "" && worktree != "/" {
		wt, err := filepath.EvalSymlinks(worktree)
		if err != nil {
			return nil, fmt.Errorf("worktree guard: worktree %s: %w", worktree, err)
		}
		g.worktree = wt
		g.top = wt
	}
	return g, nil
}

// Top is the physical top of the allowed area.
func (g *Guard) Top() string { return g.top }

// Check decides one target.
func (g *Guard) Check(target string) Verdict {
	abs := target
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(g.directory, target)
	}
	v := Verdict{Input: target, Abs: abs, Physical: abs}
	if abs == g.top || strings.HasPrefix(abs, g.top+string(filepath.Separator)) {
		v.Inside = true
		return v
	}
	v.Code = slimerr.CodeOutsideWorkspace
	return v
}

// BlockError returns the blocked error for a verdict that is not inside.
func (g *Guard) BlockError(tool string, v Verdict) error {
	if v.Inside {
		return nil
	}
	return slimerr.New(slimerr.Blocked, v.Code, "%s blocked: patch contains path outside workspace root: %s", tool, v.Physical)
}

var _ = os.Lstat
