package format

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slimgate/slim/internal/extprog"
	"github.com/slimgate/slim/worktree"
)

// Options tune a Host. The package reads no environment variable: the
// slim command fills these in.
type Options struct {
	// Config is where the host's configuration lives.
	Config Sources
	// Path is the PATH list programs are looked up in.
	Path string
	// HostBin is the host's own bin directory ($XDG_CACHE_HOME/opencode/bin),
	// searched after Path for a built-in formatter's program, as the host
	// searches it.
	HostBin string
	// HostPackages is the host's npm package cache
	// ($XDG_CACHE_HOME/opencode/packages), where it keeps the prettier,
	// biome and oxfmt it downloads.
	HostPackages string
	// Env is the environment formatters run with (each formatter's own
	// environment is added to it); nil means the current process's.
	Env []string
	// Experimental lists the host's experimental switches that are on,
	// by the name a Rule gives (oxfmt).
	Experimental map[string]bool
	// Timeout bounds each formatter run (default 10 s); ProbeTimeout each
	// probe (default 5 s).
	Timeout      time.Duration
	ProbeTimeout time.Duration
	// OutputLimit bounds how much of each formatter's stdout and stderr is
	// kept (default 16 KiB each).
	OutputLimit int
	// MaxFileSize is the largest file Run formats (default 64 MiB): it reads
	// the file before and after each formatter to say what changed.
	MaxFileSize int64
}

// Defaults of Options.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultProbeTimeout = 5 * time.Second
	DefaultOutputLimit  = 16 << 10
	DefaultMaxFileSize  = 64 << 20
)

// Host reproduces the host's formatting for one session: the formatters
// its configuration enables in the session's directory, detected once and
// remembered, as the host detects them once per instance. It is safe for
// concurrent use.
type Host struct {
	guard    *worktree.Guard
	dir, wt  string
	opts     Options
	cfg      *Config
	table    []tableRow
	mu       sync.Mutex
	detected map[string]detection // by formatter name
}

// tableRow is one formatter of the merged table, or a built-in the
// configuration took out (removed is then set).
type tableRow struct {
	f       Formatter
	removed string // "", or the reason code it was taken out
	detail  string
}

// detection is the outcome of a formatter's rule in this session.
type detection struct {
	ok      bool
	command []string // the argument vector, first word resolved
	reason  string
	detail  string
	err     error // the detection itself failed (an unreadable manifest)
}

// NewHost reads the configuration for the guard's session directory and
// worktree and returns its Host. A malformed configuration is a Validation
// error.
func NewHost(guard *worktree.Guard, opts Options) (*Host, error) {
	if guard == nil {
		return nil, newErr(Usage, CodeUsage, "format: no worktree guard given", nil)
	}
	if opts.Timeout < 0 || opts.ProbeTimeout < 0 {
		return nil, newErr(Usage, CodeUsage, "format: a time bound must not be negative", nil)
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ProbeTimeout == 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.OutputLimit <= 0 {
		opts.OutputLimit = DefaultOutputLimit
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	h := &Host{guard: guard, dir: guard.Directory(), wt: guard.Worktree(), opts: opts, detected: map[string]detection{}}
	cfg, err := LoadConfig(h.dir, h.wt, opts.Config)
	if err != nil {
		return nil, err
	}
	h.cfg = cfg
	h.table = mergeTable(Builtins(), cfg)
	return h, nil
}

// Config is the configuration the Host read.
func (h *Host) Config() *Config { return h.cfg }

// mergeTable applies the configuration's entries to the built-in table
// the way the host does: an entry with disabled: true takes its formatter
// out (disabling either ruff or uv takes out both); an entry for a
// built-in keeps its place and replaces the extensions, adds to the
// environment, and, with a command, replaces the detection by that
// command; an entry of a new name is added at the end and runs its command
// (without one it never runs).
func mergeTable(builtins []Formatter, cfg *Config) []tableRow {
	rows := make([]tableRow, 0, len(builtins)+len(cfg.Entries))
	at := map[string]int{}
	for _, f := range builtins {
		at[f.Name] = len(rows)
		rows = append(rows, tableRow{f: f})
	}
	if !cfg.Enabled {
		return rows
	}
	pythonOff := false
	for _, e := range cfg.Entries {
		if (e.Name == "ruff" || e.Name == "uv") && e.Disabled {
			pythonOff = true
		}
	}
	remove := func(name, reason, detail string) {
		if i, ok := at[name]; ok && rows[i].removed == "" {
			rows[i].removed, rows[i].detail = reason, detail
		}
	}
	for _, e := range cfg.Entries {
		if (e.Name == "ruff" || e.Name == "uv") && pythonOff {
			remove("ruff", ReasonDisabled, "disabled in the configuration (disabling ruff or uv disables both)")
			remove("uv", ReasonDisabled, "disabled in the configuration (disabling ruff or uv disables both)")
			continue
		}
		if e.Disabled {
			remove(e.Name, ReasonDisabled, "disabled in the configuration (disabled: true)")
			continue
		}
		i, builtin := at[e.Name]
		var f Formatter
		if builtin {
			f = rows[i].f
		} else {
			f = Formatter{Name: e.Name, Extensions: []string{}}
		}
		if e.Extensions != nil {
			f.Extensions = e.Extensions
		}
		if len(e.Environment) > 0 {
			env := map[string]string{}
			for k, v := range f.Environment {
				env[k] = v
			}
			for k, v := range e.Environment {
				env[k] = v
			}
			f.Environment = env
		}
		if e.Command != nil || !builtin {
			f.Command = e.Command
			f.Rule = Rule{}
			f.Custom = true
		}
		if builtin {
			rows[i].f = f
		} else {
			at[e.Name] = len(rows)
			rows = append(rows, tableRow{f: f})
		}
	}
	return rows
}

// The reason codes of a Decision.
const (
	ReasonRuns         = "runs"
	ReasonOff          = "formatting_off"  // no config enables formatting
	ReasonDisabled     = "disabled"        // disabled: true in the config
	ReasonExtension    = "extension"       // the file's extension is not the formatter's
	ReasonExperimental = "experimental"    // the host switch it needs is off
	ReasonSuperseded   = "superseded"      // another formatter's rule holds (uv and ruff)
	ReasonNoProgram    = "program_missing" // the program is not on PATH
	ReasonNoMarker     = "config_missing"  // no marker file found up to the worktree top
	ReasonNoDependency = "dependency_missing"
	ReasonNoPackage    = "package_missing" // the npm package's program was not found
	ReasonProbeFailed  = "probe_failed"
	ReasonNoCommand    = "no_command" // a config entry of a new name without a command
	ReasonDetectFailed = "detection_failed"
)

// Decision says whether one formatter runs on a file, and why.
type Decision struct {
	Name string `json:"name"`
	Runs bool   `json:"runs"`
	// Command is the argument vector that runs, $FILE replaced; set when
	// Runs.
	Command []string `json:"command,omitempty"`
	// Reason is a stable code (ReasonRuns, ReasonExtension, ...), Detail
	// the sentence a person reads.
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	Custom bool   `json:"custom,omitempty"`
}

// Explanation is what the host would do with one file.
type Explanation struct {
	// File is the file's absolute path, as formatters receive it.
	File      string `json:"file"`
	Extension string `json:"extension"`
	Directory string `json:"directory"`
	Worktree  string `json:"worktree"`
	// Enabled is false when the configuration leaves formatting off.
	Enabled    bool     `json:"enabled"`
	ConfigFrom []string `json:"configFrom,omitempty"`
	// Formatters has one decision per formatter, in the host's order; the
	// ones that run come in the order they run.
	Formatters []Decision `json:"formatters"`
	// DetectionError is set when a rule could not be decided (a manifest
	// that is not valid JSON): the host then formats nothing for the file,
	// and neither does Run.
	DetectionError string `json:"detectionError,omitempty"`
}

// Running returns the decisions of the formatters that run.
func (x *Explanation) Running() []Decision {
	var out []Decision
	for _, d := range x.Formatters {
		if d.Runs {
			out = append(out, d)
		}
	}
	return out
}

// target checks file against the guard and returns its absolute path.
func (h *Host) target(file string) (worktree.Verdict, error) {
	v := h.guard.Check(file)
	if v.Inside {
		return v, nil
	}
	where := v.Physical
	if where == "" {
		where = v.Abs
	}
	msg := fmt.Sprintf("format blocked: %s (%s): %s; slim runs formatters only on files inside the worktree", file, where, v.Reason)
	if v.Code == worktree.CodeInvalidPath {
		msg = fmt.Sprintf("format validation failed: %s: %s", file, v.Reason)
	}
	return v, &worktree.BlockedError{Verdict: v, Message: msg}
}

// Check refuses a file Run would refuse, without running anything: one
// outside the worktree (a *worktree.BlockedError), one that is missing or
// not a regular file (Verification), one over the size limit (Validation).
func (h *Host) Check(file string) error {
	v, err := h.target(file)
	if err != nil {
		return err
	}
	return h.statTarget(file, v.Abs)
}

// Explain says which formatters the host would run on file, with the
// command of each, and why each other one would not run. It writes
// nothing; a rule with a probe (uv, air) runs that program once with
// --help. The file need not exist, but it must lie inside the worktree:
// a file outside is refused with a *worktree.BlockedError.
func (h *Host) Explain(ctx context.Context, file string) (*Explanation, error) {
	v, err := h.target(file)
	if err != nil {
		return nil, err
	}
	return h.explain(ctx, v.Abs), nil
}

func (h *Host) explain(ctx context.Context, abs string) *Explanation {
	ext := extname(filepath.ToSlash(abs))
	x := &Explanation{File: abs, Extension: ext, Directory: h.dir, Worktree: h.wt, Enabled: h.cfg.Enabled, ConfigFrom: h.cfg.From}
	for _, row := range h.table {
		f := row.f
		d := Decision{Name: f.Name, Custom: f.Custom}
		switch {
		case !h.cfg.Enabled:
			d.Reason, d.Detail = ReasonOff, "formatting is off: no OpenCode configuration sets \"formatter\" to true or to an object"
		case row.removed != "":
			d.Reason, d.Detail = row.removed, row.detail
		case !slices.Contains(f.Extensions, ext):
			d.Reason = ReasonExtension
			d.Detail = fmt.Sprintf("handles %s, not %s", orNothing(f.Extensions), quoteExt(ext))
		default:
			det := h.detect(ctx, f)
			d.Reason, d.Detail = det.reason, det.detail
			if det.err != nil && x.DetectionError == "" {
				x.DetectionError = det.detail
			}
			if det.ok {
				d.Runs = true
				d.Command = withFile(det.command, abs)
			}
		}
		x.Formatters = append(x.Formatters, d)
	}
	if x.DetectionError != "" {
		for i, d := range x.Formatters {
			if d.Runs {
				x.Formatters[i] = Decision{Name: d.Name, Custom: d.Custom, Reason: ReasonDetectFailed,
					Detail: "would run, but another formatter's rule could not be decided, and the host then formats nothing: " + x.DetectionError}
			}
		}
	}
	return x
}

func quoteExt(ext string) string {
	if ext == "" {
		return "a name without an extension"
	}
	return ext
}

func orNothing(exts []string) string {
	if len(exts) == 0 {
		return "no extension"
	}
	return strings.Join(exts, " ")
}

// withFile replaces "$FILE" in each argument with path. Like the host, it
// replaces the first "$FILE" of an argument only; unlike the host's
// JavaScript replace, it takes path literally, so a name with "$&" or "$$"
// in it reaches the formatter unchanged.
func withFile(argv []string, path string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.Replace(a, "$FILE", path, 1)
	}
	return out
}

// detect decides f's rule in this session, once per formatter.
func (h *Host) detect(ctx context.Context, f Formatter) detection {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := f.Name
	if f.Custom {
		key = "custom:" + f.Name
	}
	if d, ok := h.detected[key]; ok {
		return d
	}
	d := h.detectRule(ctx, f)
	if ctx.Err() == nil {
		h.detected[key] = d
	}
	return d
}

func (h *Host) detectRule(ctx context.Context, f Formatter) detection {
	if f.Custom {
		if len(f.Command) == 0 {
			if f.Command == nil {
				return detection{reason: ReasonNoCommand, detail: "the configuration gives this formatter no command"}
			}
			return detection{reason: ReasonNoCommand, detail: "the configuration gives this formatter an empty command"}
		}
		return detection{ok: true, command: f.Command, reason: ReasonRuns, detail: "the configuration gives its command"}
	}
	r := f.Rule
	cmd := append([]string(nil), f.Command...)
	var why []string
	if r.Experimental != "" {
		if !h.opts.Experimental[r.Experimental] {
			return detection{reason: ReasonExperimental, detail: fmt.Sprintf("needs the host's experimental switch OPENCODE_EXPERIMENTAL_%s (or OPENCODE_EXPERIMENTAL)", strings.ToUpper(r.Experimental))}
		}
		why = append(why, "the experimental switch is on")
	}
	if r.Unless != "" {
		for _, b := range Builtins() {
			if b.Name == r.Unless {
				if other := h.detectRule(ctx, b); other.ok {
					return detection{reason: ReasonSuperseded, detail: fmt.Sprintf("%s applies here, and the host then leaves %s out", r.Unless, f.Name)}
				} else if other.err != nil {
					return other
				}
			}
		}
		why = append(why, r.Unless+" does not apply")
	}
	if r.Program != "" {
		p, err := extprog.Look(r.Program, joinPath(h.opts.Path, h.opts.HostBin))
		if err != nil {
			return detection{reason: ReasonNoProgram, detail: fmt.Sprintf("%s is not on PATH", r.Program)}
		}
		cmd[0] = p
		why = append(why, fmt.Sprintf("%s is on PATH (%s)", r.Program, p))
	}
	if len(r.Markers) > 0 {
		found, err := h.findMarker(r.Markers)
		if err != nil {
			return detection{reason: ReasonDetectFailed, detail: err.Error(), err: err}
		}
		if found == "" {
			return detection{reason: ReasonNoMarker, detail: fmt.Sprintf("found none of %s from %s up to %s", markerWords(r.Markers), h.dir, h.stopWords())}
		}
		why = append(why, found)
	}
	if r.Dependency != nil {
		found, err := h.findDependency(*r.Dependency)
		if err != nil {
			return detection{reason: ReasonDetectFailed, detail: err.Error(), err: err}
		}
		if found == "" {
			return detection{reason: ReasonNoDependency, detail: fmt.Sprintf("no %s from %s up to %s lists %s in %s",
				r.Dependency.Manifest, h.dir, h.stopWords(), r.Dependency.Name, strings.Join(r.Dependency.Sections, " or "))}
		}
		why = append(why, found)
	}
	if r.Package != nil {
		p, where := h.findPackage(*r.Package)
		if p == "" {
			return detection{reason: ReasonNoPackage, detail: fmt.Sprintf("the program %s of the npm package %s is in none of the host's package cache, node_modules/.bin up to %s, PATH (the host would download it; slim does not)",
				r.Package.Bin, r.Package.Name, h.stopWords())}
		}
		cmd[0] = p
		why = append(why, fmt.Sprintf("%s is %s (%s)", r.Package.Bin, where, p))
	}
	if r.Probe != nil {
		if err := h.probe(ctx, cmd[0], *r.Probe); err != nil {
			return detection{reason: ReasonProbeFailed, detail: err.Error()}
		}
		why = append(why, fmt.Sprintf("%s %s succeeds", filepath.Base(cmd[0]), strings.Join(r.Probe.Args, " ")))
	}
	return detection{ok: true, command: cmd, reason: ReasonRuns, detail: strings.Join(why, "; ")}
}

func joinPath(path, extra string) string {
	switch {
	case extra == "":
		return path
	case path == "":
		return extra
	}
	return path + string(os.PathListSeparator) + extra
}

func (h *Host) stopWords() string {
	if h.wt == "" {
		return "the file system root (there is no worktree)"
	}
	return h.wt
}

func markerWords(ms []Marker) string {
	var words []string
	for _, m := range ms {
		if m.Contains != "" {
			words = append(words, fmt.Sprintf("%s containing %q", m.File, m.Contains))
		} else {
			words = append(words, m.File)
		}
	}
	return strings.Join(words, ", ")
}

// upFind lists the paths of name that exist from the session directory up
// to the worktree top, nearest first.
func (h *Host) upFind(name string) []string {
	var out []string
	for _, d := range upDirs(h.dir, h.wt) {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// findMarker returns a sentence naming the first marker that holds, "" when
// none does.
func (h *Host) findMarker(ms []Marker) (string, error) {
	for _, m := range ms {
		found := h.upFind(m.File)
		if len(found) == 0 {
			continue
		}
		if m.Contains == "" {
			return "found " + found[0], nil
		}
		data, err := os.ReadFile(found[0])
		if err != nil {
			return "", fmt.Errorf("read %s: %v", found[0], err)
		}
		if strings.Contains(string(data), m.Contains) {
			return fmt.Sprintf("%s contains %q", found[0], m.Contains), nil
		}
	}
	return "", nil
}

// findDependency returns a sentence naming the manifest that lists the
// package, "" when none does. Manifests are read nearest first, and one
// that is not valid JSON is an error, as it is for the host.
func (h *Host) findDependency(dep Dependency) (string, error) {
	for _, p := range h.upFind(dep.Manifest) {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("read %s: %v", p, err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			return "", fmt.Errorf("%s is not valid JSON (%v), so the host stops formatting this file", p, err)
		}
		obj, _ := doc.(map[string]any)
		for _, s := range dep.Sections {
			sec, _ := obj[s].(map[string]any)
			if truthy(sec[dep.Name]) {
				return fmt.Sprintf("%s lists %s in %s", p, dep.Name, s), nil
			}
		}
	}
	return "", nil
}

// truthy is JavaScript's truth of a JSON value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0
	}
	return true
}

// findPackage finds an npm package's program: in the host's package cache
// first (what the host runs), then in node_modules/.bin from the session
// directory up to the worktree top, then on PATH.
func (h *Host) findPackage(pkg Package) (path, where string) {
	if h.opts.HostPackages != "" {
		p := filepath.Join(h.opts.HostPackages, filepath.FromSlash(pkg.Name), "node_modules", ".bin", pkg.Bin)
		if extprog.Executable(p) == nil {
			return p, "in the host's package cache"
		}
	}
	for _, d := range upDirs(h.dir, h.wt) {
		p := filepath.Join(d, "node_modules", ".bin", pkg.Bin)
		if extprog.Executable(p) == nil {
			return p, "in node_modules/.bin"
		}
	}
	if p, err := extprog.Look(pkg.Bin, h.opts.Path); err == nil {
		return p, "on PATH"
	}
	return "", ""
}

// probe runs program with the probe's arguments.
func (h *Host) probe(ctx context.Context, program string, pr Probe) error {
	ctx, cancel := context.WithTimeout(ctx, h.opts.ProbeTimeout)
	defer cancel()
	cmd := extprog.Command(ctx, program, pr.Args, h.dir)
	cmd.Env = h.opts.Env
	out := &extprog.Bounded{Max: 64 << 10}
	cmd.Stdout = out
	err := cmd.Run()
	what := filepath.Base(program) + " " + strings.Join(pr.Args, " ")
	if ctx.Err() != nil {
		return fmt.Errorf("%s did not answer within %s", what, h.opts.ProbeTimeout)
	}
	if err != nil {
		return fmt.Errorf("%s failed: %v", what, err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	for _, s := range pr.FirstLineContains {
		if !strings.Contains(first, s) {
			return fmt.Errorf("the first line of %s does not say %q", what, s)
		}
	}
	return nil
}

// statTarget checks that the file to format is a regular file of at most
// the size limit.
func (h *Host) statTarget(file, abs string) error {
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return newErr(Verification, CodeMissing, fmt.Sprintf("format: %s does not exist", file), err)
	}
	if err != nil {
		return newErr(Internal, CodeInternal, fmt.Sprintf("format: %v", err), err)
	}
	if !fi.Mode().IsRegular() {
		return newErr(Verification, CodeNotRegular, fmt.Sprintf("format: %s is not a regular file", file), nil)
	}
	if fi.Size() > h.opts.MaxFileSize {
		return newErr(Validation, CodeTooLarge, fmt.Sprintf("format: %s is %d bytes, over the %d bytes slim formats", file, fi.Size(), h.opts.MaxFileSize), nil)
	}
	return nil
}
