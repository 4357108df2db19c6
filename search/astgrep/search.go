package astgrep

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Query is what both Search and Replace ask ast-grep.
type Query struct {
	// Binary is the ast-grep to run (from Locate).
	Binary string
	// Dir is the project directory: ast-grep's working directory, which
	// relative paths and globs resolve against.
	Dir string
	// Pattern is the AST pattern, with $VAR and $$$ metavariables; it must
	// parse as one complete node of Lang.
	Pattern string
	// Lang is one of Languages.
	Lang string
	// Paths are the files and directories to search; none means ".".
	Paths []string
	// Globs include (or, with a leading !, exclude) files, one --globs
	// each.
	Globs []string
	// Env is ast-grep's environment; nil means slim's own.
	Env []string
	// Limits bound the run; zero fields take DefaultLimits.
	Limits Limits
}

// SearchOptions are a Query and the lines of context around each match.
type SearchOptions struct {
	Query
	// Context is the number of lines shown around each match (-C).
	Context int
}

// Match is one match as a result lists it.
type Match struct {
	// File is the path as ast-grep reported it: relative to Dir for a
	// relative search path.
	File string `json:"file"`
	// Line and Column are 1-based; EndLine is the line the match ends on.
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	EndLine int    `json:"endLine"`
	Text    string `json:"text"`
	// Lines are the whole lines of the match, with Context lines around
	// it when asked for; FirstLine is the number of the first.
	Lines     string `json:"lines,omitempty"`
	FirstLine int    `json:"firstLine,omitempty"`
}

// Cut reasons: why a result is partial.
const (
	CutMatches = "matches" // more matches than Limits.MaxMatches were found
	CutOutput  = "output"  // ast-grep's output passed Limits.MaxOutput
	CutTimeout = "timeout" // ast-grep ran into Limits.Timeout
)

// SearchResult is what Search found.
type SearchResult struct {
	// Matches lists at most Limits.MaxMatches matches, in ast-grep's order.
	Matches []Match `json:"matches"`
	// Total is the number of matches found (at least this many when the
	// output was cut), Files the number of files they are in.
	Total int `json:"total"`
	Files int `json:"files"`
	// Truncated is set when the result is partial; TruncatedBy says why
	// (CutMatches, CutOutput, CutTimeout).
	Truncated   bool     `json:"truncated"`
	TruncatedBy []string `json:"truncatedBy,omitempty"`
	// Warnings are what ast-grep printed on stderr alongside its answer.
	Warnings []string `json:"warnings,omitempty"`
	// Hints suggest how to fix a pattern that matched nothing.
	Hints []string `json:"hints,omitempty"`
	// Output is the text form (FormatSearch).
	Output string `json:"output"`
}

// Search runs one structural search. Errors are *Error values: Usage for
// bad options, Missing when no binary is given, Verification for a search
// path that does not exist, Validation when ast-grep refuses the query,
// Internal when it cannot run or ctx ends.
func Search(ctx context.Context, opts SearchOptions) (*SearchResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	q := opts.Query
	if err := q.validate(); err != nil {
		return nil, err
	}
	if opts.Context < 0 {
		return nil, newErr(Usage, CodeUsage, "ast_grep_search: context must not be negative", nil)
	}
	lim := q.Limits.withDefaults()
	args := []string{"run", "-p", q.Pattern, "--lang", q.Lang, "--json=compact"}
	if opts.Context > 0 {
		args = append(args, "-C", fmt.Sprint(opts.Context))
	}
	args = append(args, q.globArgs()...)
	args = append(args, "--")
	args = append(args, q.paths()...)
	if err := q.checkPaths("ast_grep_search"); err != nil {
		return nil, err
	}
	rr := runTool(ctx, q.Binary, q.Dir, args, q.Env, lim)
	raws, warnings, err := interpret("ast_grep_search", rr)
	if err != nil {
		return nil, err
	}
	res := &SearchResult{Matches: []Match{}, Total: len(raws), Warnings: warnings}
	files := map[string]bool{}
	for _, m := range raws {
		files[m.File] = true
		if len(res.Matches) < lim.MaxMatches {
			res.Matches = append(res.Matches, toMatch(m, opts.Context))
		}
	}
	res.Files = len(files)
	res.TruncatedBy = cutReasons(rr, len(raws) > lim.MaxMatches)
	res.Truncated = len(res.TruncatedBy) > 0
	if res.Total == 0 {
		res.Hints = PatternHints(q.Pattern, q.Lang)
	}
	res.Output = FormatSearch(res, lim)
	return res, nil
}

func cutReasons(rr runResult, tooMany bool) []string {
	var out []string
	if tooMany {
		out = append(out, CutMatches)
	}
	if rr.outputCut {
		out = append(out, CutOutput)
	}
	if rr.timedOut {
		out = append(out, CutTimeout)
	}
	return out
}

func toMatch(m rawMatch, context int) Match {
	out := Match{
		File:    m.File,
		Line:    m.Range.Start.Line + 1,
		Column:  m.Range.Start.Column + 1,
		EndLine: m.Range.End.Line + 1,
		Text:    m.Text,
	}
	if context > 0 {
		out.Lines = m.Lines
		before := context
		if before > m.Range.Start.Line {
			before = m.Range.Start.Line
		}
		out.FirstLine = out.Line - before
	}
	return out
}

func (q *Query) validate() error {
	switch {
	case q.Binary == "":
		return newErr(Missing, CodeNotInstalled, "ast-grep not found: "+InstallHint, nil)
	case strings.TrimSpace(q.Pattern) == "":
		return newErr(Usage, CodeUsage, "a pattern is required", nil)
	case q.Lang == "":
		return newErr(Usage, CodeUsage, "a language is required (one of "+strings.Join(Languages, ", ")+")", nil)
	case !ValidLanguage(q.Lang):
		return newErr(Usage, CodeUsage, fmt.Sprintf("unknown language %q; use one of %s", q.Lang, strings.Join(Languages, ", ")), nil)
	case q.Dir == "" || !filepath.IsAbs(q.Dir):
		return newErr(Usage, CodeUsage, "the project directory must be an absolute path", nil)
	}
	for _, p := range append(append([]string{}, q.Paths...), q.Globs...) {
		if strings.IndexByte(p, 0) >= 0 {
			return newErr(Usage, CodeUsage, "a path or glob contains a NUL byte", nil)
		}
	}
	for _, g := range q.Globs {
		if g == "" || g == "!" {
			return newErr(Usage, CodeUsage, "an empty glob", nil)
		}
	}
	return nil
}

func (q *Query) paths() []string {
	var out []string
	for _, p := range q.Paths {
		if p != "" {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return []string{"."}
	}
	return out
}

func (q *Query) globArgs() []string {
	var out []string
	for _, g := range q.Globs {
		out = append(out, "--globs", g)
	}
	return out
}

// checkPaths refuses a search path that does not exist before ast-grep
// runs, with the same opening words as the grep and glob pre-check.
func (q *Query) checkPaths(tool string) error {
	for _, p := range q.paths() {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(q.Dir, p)
		}
		if _, err := os.Stat(abs); err != nil {
			if os.IsNotExist(err) {
				return newErr(Verification, CodePathNotFound,
					fmt.Sprintf("Search path does not exist: %s (from %q). The %s search was stopped before ast-grep ran; check the path, relative paths start at %s.", abs, p, tool, q.Dir), err)
			}
			return newErr(Verification, CodePathNotFound,
				fmt.Sprintf("Search path is invalid: %s (from %q): %v. The %s search was stopped before ast-grep ran.", abs, p, err, tool), err)
		}
	}
	return nil
}

// interpret turns a finished run into its matches and warnings, or the
// error it stands for: a non-zero exit whose stderr says no files were
// found is an empty result; any other stderr without a match is an error
// (ast-grep refused the query); an empty stdout is an empty result.
func interpret(tool string, rr runResult) ([]rawMatch, []string, error) {
	switch {
	case rr.startErr != nil:
		return nil, nil, newErr(Internal, CodeInternal, fmt.Sprintf("%s: could not run ast-grep: %v", tool, rr.startErr), rr.startErr)
	case rr.canceled:
		return nil, nil, newErr(Internal, CodeInterrupted, tool+": interrupted; ast-grep was stopped", nil)
	}
	raws, _ := parseMatches(rr.stdout)
	// ast-grep searches files in parallel, so its order varies from run to
	// run; a result lists files by name and matches by position.
	sort.SliceStable(raws, func(i, j int) bool {
		if raws[i].File != raws[j].File {
			return raws[i].File < raws[j].File
		}
		return raws[i].Range.ByteOffset.Start < raws[j].Range.ByteOffset.Start
	})
	var warnings []string
	if rr.stderr != "" {
		warnings = []string{rr.stderr}
	}
	if rr.exitCode != 0 && !rr.timedOut && !rr.outputCut && len(raws) == 0 && rr.stderr != "" {
		if strings.Contains(rr.stderr, "No files found") {
			return nil, warnings, nil
		}
		code, kind := CodeToolError, Validation
		if strings.Contains(rr.stderr, "No such file or directory") {
			code, kind = CodePathNotFound, Verification
		}
		return nil, nil, newErr(kind, code, fmt.Sprintf("%s: ast-grep failed (exit %d): %s", tool, rr.exitCode, clip(rr.stderr, 2000)), nil)
	}
	return raws, warnings, nil
}

// PatternHints explains the usual reasons a pattern matches nothing.
func PatternHints(pattern, lang string) []string {
	p := strings.TrimSpace(pattern)
	hintOnce.Do(func() {
		pyDefColon = regexp.MustCompile(`^(async\s+)?(def|class)\b[^\n]*:$`)
		jsFunction = regexp.MustCompile(`^(export\s+)?(default\s+)?(async\s+)?function\b`)
	})
	var out []string
	switch lang {
	case "python":
		if pyDefColon.MatchString(p) {
			out = append(out, "A Python def or class pattern must not end with a colon: write `def $NAME($$$ARGS)` or `class $NAME`, or include the body: `def $NAME($$$ARGS): $$$BODY`.")
		}
	case "javascript", "typescript", "tsx":
		if jsFunction.MatchString(p) && !strings.Contains(p, "{") {
			out = append(out, "A JavaScript or TypeScript function pattern needs its parameters and a body: write `function $NAME($$$ARGS) { $$$BODY }`.")
		}
	}
	return out
}

// The hint patterns are compiled on first use, not when slim starts: the
// hook runs slim on every tool call and never needs them.
var (
	hintOnce               sync.Once
	pyDefColon, jsFunction *regexp.Regexp
)

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
