package search

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// The engines a result can come from (GrepResult.Engine, GlobResult.Engine).
const (
	EngineRipgrep  = "rg"
	EngineFallback = "fallback"
)

// DefaultLimit is how many matches or files a search shows unless told
// otherwise, as OpenCode's own grep and glob tools do.
const DefaultLimit = 100

// Match is one matching line.
type Match struct {
	Path string `json:"path"` // absolute
	Line int    `json:"line"` // 1-based
	// Text is the line without its terminator, cut to 2,000 characters
	// (then "..." is appended).
	Text string `json:"text"`
}

// RunInfo is what grep and glob results share: the engine that ran and
// how the run ended.
type RunInfo struct {
	Engine string `json:"engine"`
	// FallbackReason says why the built-in fallback ran instead of
	// ripgrep (empty when ripgrep ran).
	FallbackReason string `json:"fallbackReason,omitempty"`
	// Truncated: more was found than is shown.
	Truncated bool `json:"truncated"`
	// TimedOut: the search was stopped at its time limit; what is shown
	// and counted is what was found until then.
	TimedOut bool          `json:"timedOut,omitempty"`
	Timeout  time.Duration `json:"-"`
	// Partial: some files or directories could not be read and were
	// skipped.
	Partial bool `json:"partial,omitempty"`
}

// GrepResult is the answer of Grep: the matches shown (at most the limit),
// grouped by file, the most recently modified files first, and the total
// number of matching lines found.
type GrepResult struct {
	RunInfo
	Total   int     `json:"total"`
	Matches []Match `json:"matches"`
}

// GlobResult is the answer of Glob: the files shown (at most the limit),
// the most recently modified first, and the total number of files found.
type GlobResult struct {
	RunInfo
	Total int      `json:"total"`
	Files []string `json:"files"`
	// Dir is the directory the pattern was matched in, and Pattern the
	// pattern, for the hint about absolute patterns.
	Dir     string `json:"-"`
	Pattern string `json:"-"`
}

// Text renders r the way OpenCode's grep tool prints its result, so that
// prompts and habits carry over: "Found N matches", then per file a
// "path:" header and "  Line N: text" lines, a blank line between files;
// "No files found" when nothing matched. Notes about truncation, time-outs,
// skipped files and the fallback are added in parentheses.
func (r *GrepResult) Text() string {
	var b strings.Builder
	r.fallbackLine(&b)
	if len(r.Matches) == 0 {
		b.WriteString("No files found")
	} else {
		fmt.Fprintf(&b, "Found %d matches", r.Total)
		if r.Truncated {
			fmt.Fprintf(&b, " (showing %d)", len(r.Matches))
		}
		current := ""
		for _, m := range r.Matches {
			if m.Path != current {
				if current != "" {
					b.WriteString("\n")
				}
				current = m.Path
				fmt.Fprintf(&b, "\n%s:", m.Path)
			}
			fmt.Fprintf(&b, "\n  Line %d: %s", m.Line, m.Text)
		}
		if r.Truncated {
			fmt.Fprintf(&b, "\n\n(Only %d of the %d matching lines are shown: those in the most recently modified files. "+
				"Narrow the path, make the pattern more specific or add an include glob to see the others.)", len(r.Matches), r.Total)
		}
	}
	r.notes(&b)
	return b.String()
}

// Text renders r the way OpenCode's glob tool prints its result: one
// absolute path per line, the most recently modified first; "No files
// found" when nothing matched.
func (r *GlobResult) Text() string {
	var b strings.Builder
	r.fallbackLine(&b)
	if len(r.Files) == 0 {
		b.WriteString("No files found")
		if strings.HasPrefix(r.Pattern, "/") && r.Dir != "" {
			fmt.Fprintf(&b, "\n\n(The pattern is matched against paths relative to %s, and a leading / anchors it there; "+
				"an absolute path as the pattern matches nothing. Give the directory as the path and a relative pattern.)", r.Dir)
		}
	} else {
		b.WriteString(strings.Join(r.Files, "\n"))
		if r.Truncated {
			fmt.Fprintf(&b, "\n\n(Only %d of the %d matching files are shown: the most recently modified. "+
				"Narrow the path or make the pattern more specific to see the others.)", len(r.Files), r.Total)
		}
	}
	r.notes(&b)
	return b.String()
}

func (o *RunInfo) fallbackLine(b *strings.Builder) {
	if o.Engine != EngineFallback {
		return
	}
	fmt.Fprintf(b, "(Fallback search: %s, so slim searched with its built-in engine. Its results can differ slightly from ripgrep's, "+
		"which OpenCode's own tools use: Go regular expressions treat \\w, \\d, \\s and \\b as ASCII, and only "+
		".gitignore, .ignore, .rgignore and .git/info/exclude are read. Install ripgrep for identical results.)\n", o.FallbackReason)
}

func (o *RunInfo) notes(b *strings.Builder) {
	if o.TimedOut {
		fmt.Fprintf(b, "\n\n(The search was stopped after %s, its time limit; the results above are incomplete.)", o.Timeout)
	}
	if o.Partial {
		b.WriteString("\n\n(Some files or directories could not be read and were skipped.)")
	}
}

// fileKey orders files: the most recently modified first, then by path.
type fileKey struct {
	mtime int64
	path  string
}

func (a fileKey) before(b fileKey) bool {
	if a.mtime != b.mtime {
		return a.mtime > b.mtime
	}
	return a.path < b.path
}

// modTime is the modification time used to order results (0 when the
// file cannot be stat'ed, so it sorts last, as in OpenCode).
func modTime(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.ModTime().UnixNano()
}

// topN keeps the first limit items in before order while counting all of
// them, without holding more than about twice the limit at any time.
type topN[T interface{ before(T) bool }] struct {
	limit int
	total int
	kept  []T
	bound *T // the worst kept item once the list was cut; anything after it cannot be shown
}

// add counts an item and keeps it when it could be shown.
func (c *topN[T]) add(k T) {
	c.total++
	if c.limit <= 0 {
		return
	}
	if c.bound != nil && !k.before(*c.bound) {
		return
	}
	c.kept = append(c.kept, k)
	if len(c.kept) >= 2*c.limit {
		c.compact()
	}
}

func (c *topN[T]) compact() {
	sort.Slice(c.kept, func(i, j int) bool { return c.kept[i].before(c.kept[j]) })
	if len(c.kept) > c.limit {
		c.kept = c.kept[:c.limit]
	}
	if len(c.kept) == c.limit {
		b := c.kept[c.limit-1]
		c.bound = &b
	}
}

// grepCollector keeps the first limit matches in result order (newest file
// first, then path, then line) while counting all of them.
type grepCollector struct {
	topN[keyedMatch]
	lastKey fileKey
	last    string
	stat    func(string) int64
}

type keyedMatch struct {
	key fileKey
	Match
}

func (k keyedMatch) before(o keyedMatch) bool {
	if k.key != o.key {
		return k.key.before(o.key)
	}
	return k.Line < o.Line
}

func newGrepCollector(limit int, stat func(string) int64) *grepCollector {
	if stat == nil {
		stat = modTime
	}
	return &grepCollector{topN: topN[keyedMatch]{limit: limit}, stat: stat}
}

// fileKey returns the ordering key of path, stat'ing each file once per
// run of its matches.
func (c *grepCollector) fileKey(path string) fileKey {
	if path != c.last || c.last == "" {
		c.last = path
		c.lastKey = fileKey{mtime: c.stat(path), path: path}
	}
	return c.lastKey
}

// wants reports whether a match in path at line could still be shown.
// Callers that can skip decoding a match's text ask first.
func (c *grepCollector) wants(path string, line int) bool {
	if want, sure := c.wantsFile(path); sure {
		return want
	}
	return line < c.bound.Line
}

// wantsFile is wants for a match in path at a line not yet known: sure
// is false only when path is the file of the worst match kept, where the
// line decides (wants). The others are decided by their file's place,
// without the line number being looked for.
func (c *grepCollector) wantsFile(path string) (want, sure bool) {
	if c.bound == nil {
		return true, true
	}
	k := c.fileKey(path)
	if k == c.bound.key {
		return false, false
	}
	return k.before(c.bound.key), true
}

// add counts a match and keeps it when it could be shown.
func (c *grepCollector) add(m Match) {
	if c.limit <= 0 {
		c.total++
		return
	}
	c.topN.add(keyedMatch{key: c.fileKey(m.Path), Match: m})
}

// count counts a match that cannot be shown without keeping it.
func (c *grepCollector) count() { c.total++ }

// result returns the kept matches in order and the total.
func (c *grepCollector) result() ([]Match, int) {
	c.compact()
	out := make([]Match, len(c.kept))
	for i, k := range c.kept {
		out[i] = k.Match
	}
	return out, c.total
}

// globCollector keeps the newest limit files while counting all.
type globCollector struct {
	topN[fileKey]
	stat func(string) int64
}

func newGlobCollector(limit int, stat func(string) int64) *globCollector {
	if stat == nil {
		stat = modTime
	}
	return &globCollector{topN: topN[fileKey]{limit: limit}, stat: stat}
}

func (c *globCollector) add(path string) {
	if c.limit <= 0 {
		c.total++
		return
	}
	c.topN.add(fileKey{mtime: c.stat(path), path: path})
}

func (c *globCollector) result() ([]string, int) {
	c.compact()
	out := make([]string, len(c.kept))
	for i, k := range c.kept {
		out[i] = k.path
	}
	return out, c.total
}
