// Package worktree resolves a directory to its git worktree and decides
// whether paths lie inside the area a session may write: the session's
// directory plus its worktree top level. Containment is decided on physical
// paths (symlinks, dangling ones included, resolved component by component)
// and by file identity, never by string prefixes.
package worktree

import "github.com/slimgate/slim/worktree/hostpath"

// Kind is the kind of checkout a directory belongs to.
type Kind string

const (
	KindMain      Kind = "main"      // a main checkout (.git is a directory)
	KindLinked    Kind = "linked"    // a linked worktree (git worktree add)
	KindSubmodule Kind = "submodule" // a submodule checkout
	KindNone      Kind = "none"      // no git, or a bare repository (GitDir set)
)

// Info is the resolution of one directory. Paths are absolute and physical.
// Worktree is empty when there is none (never "/").
type Info struct {
	Directory    string `json:"directory"`
	Worktree     string `json:"worktree"`
	GitDir       string `json:"gitDir"`
	CommonDir    string `json:"commonDir"`
	Kind         Kind   `json:"kind"`
	Superproject string `json:"superproject,omitempty"`
	// IndexFile is the index git would read: GIT_INDEX_FILE when set (a
	// hook's temporary index), else <gitDir>/index; "" without a git dir.
	IndexFile string   `json:"indexFile,omitempty"`
	Notes     []string `json:"notes,omitempty"` // e.g. prunable worktree, incomplete repository
}

// Options tune a Guard.
type Options struct {
	// AllowNested lets targets inside nested worktrees, submodules and nested
	// repositories count as inside. The slim command sets it from
	// SLIM_ALLOW_NESTED=1; the package itself reads no slim setting.
	AllowNested bool
	// Flavor gives the lexical path rules used to make targets absolute
	// (posix or win32, Node's path semantics). The zero value is the flavor
	// of the running OS.
	Flavor hostpath.Flavor
	// GitDir and CommonDir are refused for writes (code git_dir), as is
	// the git dir that the `.git` entry at the top names, which NewGuard
	// always reads. Pass Info.GitDir and Info.CommonDir here: they also
	// cover a git dir that lies elsewhere (GIT_DIR, a bare repository).
	GitDir    string
	CommonDir string
}

// Codes of a verdict that is not inside (Verdict.Code).
const (
	// CodeOutside: the target lies outside the area, as written or
	// through a link.
	CodeOutside = "outside_workspace"
	// CodeNested: the target lies in a nested worktree, submodule or
	// repository below the area's top.
	CodeNested = "nested_worktree"
	// CodeGitDir: the target lies in the repository's git dir or common
	// dir, or passes through a .git component.
	CodeGitDir = "git_dir"
	// CodeInvalidPath: the path can name no file here (a name over 255
	// bytes, a path over the system's limit, invalid UTF-8). It is a
	// malformed input rather than a containment refusal.
	CodeInvalidPath = "invalid_path"
)

// BlockedError refuses a target: Verdict says which and why, Message is
// the sentence the model or the user reads. Verdict.Code tells a
// containment refusal from an invalid path.
type BlockedError struct {
	Verdict Verdict
	Message string
}

func (e *BlockedError) Error() string { return e.Message }

// Verdict is the containment decision for one target.
type Verdict struct {
	Input    string `json:"input"`    // the path as given
	Abs      string `json:"abs"`      // lexically absolute (no symlinks resolved)
	Physical string `json:"physical"` // symlinks resolved, missing tail re-attached
	Inside   bool   `json:"inside"`
	// Code is empty when Inside, else CodeOutside, CodeNested, CodeGitDir
	// or CodeInvalidPath.
	Code string `json:"code,omitempty"`
	// BySpelling is true when the target is already outside lexically, so
	// the host would prompt for it itself (passthrough is allowed only then).
	BySpelling bool `json:"bySpelling,omitempty"`
	// Room names the nested worktree or submodule for CodeNestedWorktree.
	Room string `json:"room,omitempty"`
	// Reason says in words why a target is not inside.
	Reason string `json:"reason,omitempty"`
	// Root and Rel locate an inside target for os.Root operations: Root is
	// the physical top of the area holding it (Guard.Top, or the directory
	// when that lies outside the worktree), Rel its physical path below Root
	// in native form ("." for Root itself). Both are empty when not inside.
	Root     string   `json:"root,omitempty"`
	Rel      string   `json:"rel,omitempty"`
	Warnings []string `json:"warnings,omitempty"` // e.g. a hard link shared with another path
}
