// Package doctor gathers what `slim doctor` reports: every external
// program slim can use (where it was found, by which rule, and the version
// it reports) and whether slim's OpenCode plugin and git hook shims are
// installed for a directory. It changes nothing and reads no environment
// variable: the caller passes the settings. It sits above the product
// packages (it asks search, search/astgrep and hooks/install), and only
// cmd/slim imports it.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slimgate/slim/hooks/install"
	"github.com/slimgate/slim/internal/extprog"
	"github.com/slimgate/slim/search"
	"github.com/slimgate/slim/search/astgrep"
)

// DefaultTimeout bounds each program's --version.
const DefaultTimeout = 5 * time.Second

// Options are the settings doctor looks with.
type Options struct {
	Dir         string // the directory to report on (absolute)
	PathList    string // PATH
	Rg          string // SLIM_RG
	AstGrep     string // SLIM_AST_GREP
	OpenCodeBin string // OpenCode's data bin directory, where its own rg lives
	// NodeBins are the node_modules/.bin directories to look for ast-grep
	// in after PATH; nil means the ones the OpenCode plugin hands slim for
	// Dir: Dir's, the project top's, and the one beside the project's and
	// the global plugin (<config>/node_modules/.bin).
	NodeBins []string
	// Getenv answers XDG_CONFIG_HOME and HOME for the global plugin's path.
	Getenv  func(string) string
	Timeout time.Duration // for each --version; 0 means DefaultTimeout
	// SlimVersion and SlimPath describe the running slim.
	SlimVersion string
	SlimPath    string
}

// Program is one external program.
type Program struct {
	Name    string `json:"name"`
	Purpose string `json:"purpose"`
	Found   bool   `json:"found"`
	Path    string `json:"path,omitempty"`
	// Source is the rule that found it: the setting that named it
	// (SLIM_RG, SLIM_AST_GREP), "PATH", "OpenCode's bin directory",
	// "node_modules" or "sg on PATH".
	Source  string `json:"source,omitempty"`
	Version string `json:"version,omitempty"`
	// Error says why it is missing or did not answer --version.
	Error string `json:"error,omitempty"`
	// Install says how to install it when it is missing.
	Install string `json:"install,omitempty"`
}

// Install is one file slim installs, and its state (install.State*), or
// "unavailable" when it cannot be known here (no git repository).
type Install struct {
	What  string `json:"what"`
	Path  string `json:"path,omitempty"`
	State string `json:"state"`
	Note  string `json:"note,omitempty"`
}

// StateUnavailable: the file's place cannot be found from here (for
// example git hooks outside a git repository).
const StateUnavailable = "unavailable"

// Report is the whole answer.
type Report struct {
	Slim      Program   `json:"slim"`
	Directory string    `json:"directory"`
	Programs  []Program `json:"programs"`
	Installs  []Install `json:"installs"`
}

// Run gathers the report. The programs are asked for their versions in
// parallel, each within the timeout.
func Run(ctx context.Context, o Options) Report {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	r := Report{
		Slim:      Program{Name: "slim", Purpose: "this program", Found: true, Path: o.SlimPath, Version: o.SlimVersion},
		Directory: o.Dir,
	}
	pp := findPlugins(o)
	if o.NodeBins == nil {
		o.NodeBins = pp.nodeBins(o.Dir)
	}
	finders := []func(context.Context, Options) Program{findGit, findRg, findAstGrep, findNode, findOpenCode}
	r.Programs = make([]Program, len(finders))
	var wg sync.WaitGroup
	for i, f := range finders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Programs[i] = f(ctx, o)
		}()
	}
	r.Installs = installs(o, pp)
	wg.Wait()
	return r
}

// onPath finds name on PATH and asks its version.
func onPath(ctx context.Context, o Options, p Program, name string, env ...string) Program {
	path, err := extprog.Look(name, o.PathList)
	if err != nil {
		p.Error = "not on PATH"
		return p
	}
	p.Found, p.Path, p.Source = true, path, "PATH"
	return version(ctx, o, p, env...)
}

func version(ctx context.Context, o Options, p Program, env ...string) Program {
	v, err := extprog.Version(ctx, p.Path, []string{"--version"}, o.Timeout, env...)
	if err != nil {
		p.Error = err.Error()
	} else {
		p.Version = v
	}
	return p
}

func findGit(ctx context.Context, o Options) Program {
	p := onPath(ctx, o, Program{Name: "git", Purpose: "the git hook checks and slim hooks install --git"}, "git")
	if !p.Found {
		p.Install = "apt-get install git (Debian, Ubuntu), brew install git (macOS), winget install Git.Git (Windows)"
	}
	return p
}

func findNode(ctx context.Context, o Options) Program {
	p := onPath(ctx, o, Program{Name: "node", Purpose: "npm installs of OpenCode and ast-grep, and the plugin's tests"}, "node")
	if !p.Found {
		p.Install = "apt-get install nodejs npm (Debian, Ubuntu), brew install node (macOS); Node.js 20 or later"
	}
	return p
}

func findOpenCode(ctx context.Context, o Options) Program {
	p := onPath(ctx, o, Program{Name: "opencode", Purpose: "the host whose tool calls slim guards"}, "opencode", "OPENCODE_DISABLE_AUTOUPDATE=1")
	if !p.Found {
		p.Install = "npm install -g opencode-ai"
	}
	return p
}

func findRg(ctx context.Context, o Options) Program {
	p := Program{Name: "rg", Purpose: "slim search grep and glob (without it they use slim's built-in fallback)"}
	rg, err := search.FindRipgrep(search.FindOptions{Explicit: o.Rg, ExplicitFrom: "SLIM_RG", PathList: o.PathList, OpenCodeBin: o.OpenCodeBin})
	if err != nil {
		p.Error = err.Error()
		if o.Rg == "" {
			p.Error = "not set by SLIM_RG, not on PATH"
			if o.OpenCodeBin != "" {
				p.Error += ", not in OpenCode's bin directory (" + o.OpenCodeBin + ")"
			}
			p.Install = strings.TrimPrefix(search.InstallHint, "Install it with your package manager: ")
		}
		return p
	}
	p.Found, p.Path = true, rg.Path
	switch rg.Source {
	case search.SourceExplicit:
		p.Source = "SLIM_RG"
	case search.SourceOpenCode:
		p.Source = "OpenCode's bin directory"
	default:
		p.Source = "PATH"
	}
	return version(ctx, o, p)
}

func findAstGrep(ctx context.Context, o Options) Program {
	p := Program{Name: "ast-grep", Purpose: "slim search ast and slim search replace"}
	bin, err := astgrep.Locate(astgrep.LocateOptions{Explicit: o.AstGrep, Path: o.PathList, NodeBins: o.NodeBins, VersionTimeout: o.Timeout})
	if err != nil {
		var ae *astgrep.Error
		if errors.As(err, &ae) && ae.Kind == astgrep.Missing && o.AstGrep == "" {
			p.Error = "not set by SLIM_AST_GREP, not on PATH as ast-grep, not in the project's node_modules/.bin, and no sg on PATH that says it is ast-grep"
			p.Install = "npm install -g @ast-grep/cli"
		} else {
			p.Error = err.Error()
		}
		return p
	}
	p.Found, p.Path, p.Source, p.Version = true, bin.Path, bin.Source, bin.Version
	if p.Version == "" {
		p = version(ctx, o, p)
	}
	return p
}

// plugins are where the project's and the global OpenCode plugin go, or
// why that cannot be known.
type plugins struct {
	project, global       string
	projectErr, globalErr error
}

func findPlugins(o Options) plugins {
	var pp plugins
	pp.project, _, pp.projectErr = install.OpenCodePath(o.Dir, false, o.Getenv)
	pp.global, _, pp.globalErr = install.OpenCodePath(o.Dir, true, o.Getenv)
	return pp
}

// nodeBins are the node_modules/.bin directories the plugin passes slim
// for dir: dir's own, the project top's (the worktree), and the one
// beside each plugin's config directory, whether or not the plugin is
// installed there yet.
func (pp plugins) nodeBins(dir string) []string {
	out := []string{filepath.Join(dir, "node_modules", ".bin")}
	add := func(d string) {
		for _, have := range out {
			if have == d {
				return
			}
		}
		out = append(out, d)
	}
	if pp.projectErr == nil {
		config := filepath.Dir(filepath.Dir(pp.project)) // <top>/.opencode
		add(filepath.Join(filepath.Dir(config), "node_modules", ".bin"))
		add(filepath.Join(config, "node_modules", ".bin"))
	}
	if pp.globalErr == nil {
		add(filepath.Join(filepath.Dir(filepath.Dir(pp.global)), "node_modules", ".bin"))
	}
	return out
}

// installs reports the project plugin, the global plugin and the git
// hook shims for o.Dir.
func installs(o Options, pp plugins) []Install {
	var out []Install
	add := func(what string, s install.Status, err error) {
		if err != nil {
			out = append(out, Install{What: what, Path: s.Path, State: StateUnavailable, Note: err.Error()})
			return
		}
		out = append(out, Install{What: what, Path: s.Path, State: s.State, Note: s.Note})
	}
	var project, global install.Status
	if pp.projectErr != nil {
		add("OpenCode plugin", install.Status{}, pp.projectErr)
	} else {
		var err error
		project, err = install.PluginStatus(pp.project)
		add("OpenCode plugin", project, err)
	}
	if pp.globalErr != nil {
		add("OpenCode plugin, global", install.Status{}, pp.globalErr)
	} else {
		var err error
		global, err = install.PluginStatus(pp.global)
		add("OpenCode plugin, global", global, err)
	}
	if isSlims(project.State) && isSlims(global.State) {
		out[len(out)-1].Note = "the project copy is installed too; the plugin registers its hooks once per directory"
	}
	hooksDir, _, err := install.GitHooksDir(o.Dir)
	if err != nil {
		out = append(out, Install{What: "git hooks", State: StateUnavailable, Note: err.Error()})
		return out
	}
	sts, err := install.GitStatus(hooksDir)
	for _, s := range sts {
		out = append(out, Install{What: "git hook " + lastElem(s.Path), Path: s.Path, State: s.State, Note: s.Note})
	}
	if err != nil {
		out = append(out, Install{What: "git hooks", Path: hooksDir, State: StateUnavailable, Note: err.Error()})
	}
	return out
}

func isSlims(state string) bool {
	return state == install.StateCurrent || state == install.StateOutdated
}

func lastElem(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Text renders the report for a terminal.
func (r Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slim %s", r.Slim.Version)
	if r.Slim.Path != "" {
		fmt.Fprintf(&b, " (%s)", r.Slim.Path)
	}
	b.WriteString("\n\nPrograms slim can use:\n")
	for _, p := range r.Programs {
		switch {
		case p.Found && p.Version != "":
			fmt.Fprintf(&b, "  %-9s %-28s %s (%s)\n", p.Name, p.Version, p.Path, p.Source)
		case p.Found:
			fmt.Fprintf(&b, "  %-9s %-28s %s (%s)\n", p.Name, "found, no version", p.Path, p.Source)
			fmt.Fprintf(&b, "  %-9s %s\n", "", p.Error)
		default:
			fmt.Fprintf(&b, "  %-9s %-28s %s\n", p.Name, "missing", p.Error)
		}
		if !p.Found {
			fmt.Fprintf(&b, "  %-9s used for %s", "", p.Purpose)
			if p.Install != "" {
				fmt.Fprintf(&b, "; install: %s", p.Install)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nInstalled for %s:\n", r.Directory)
	for _, in := range r.Installs {
		fmt.Fprintf(&b, "  %-24s %-11s %s\n", in.What, in.State, in.Path)
		if in.Note != "" {
			fmt.Fprintf(&b, "  %-24s %-11s %s\n", "", "", in.Note)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
