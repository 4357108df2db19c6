package astgrep

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Widths of the text output: a match is cut to matchWidth characters, each
// side of a replacement pair to pairWidth.
const (
	matchWidth = 100
	pairWidth  = 60
)

// FormatSearch renders a search result as text: a summary line, then the
// matches grouped by file, one line per match (its 1-based line number and
// its text cut to 100 characters, newlines escaped), or each match's lines
// with their numbers when context was asked for. A partial result says so
// and why; an empty one carries the pattern hints.
func FormatSearch(res *SearchResult, lim Limits) string {
	lim = lim.withDefaults()
	var b strings.Builder
	if res.Total == 0 {
		b.WriteString("No matches found.\n")
		for _, w := range res.Warnings {
			fmt.Fprintf(&b, "ast-grep said: %s\n", oneLine(w, 400))
		}
		for _, h := range res.Hints {
			fmt.Fprintf(&b, "Hint: %s\n", h)
		}
		writeCuts(&b, res.TruncatedBy, res.Total, len(res.Matches), lim)
		return b.String()
	}
	fmt.Fprintf(&b, "Found %s in %s\n", plural(res.Total, "match", "matches"), plural(res.Files, "file", "files"))
	writeCuts(&b, res.TruncatedBy, res.Total, len(res.Matches), lim)
	last := ""
	for _, m := range res.Matches {
		if m.File != last {
			fmt.Fprintf(&b, "\n%s\n", m.File)
			last = m.File
		}
		if m.Lines == "" {
			fmt.Fprintf(&b, "  %d: %s\n", m.Line, cut(m.Text, matchWidth))
			continue
		}
		for i, l := range strings.Split(strings.TrimRight(m.Lines, "\r\n"), "\n") {
			n := m.FirstLine + i
			sep := "-"
			if n >= m.Line && n <= m.EndLine {
				sep = ":"
			}
			fmt.Fprintf(&b, "  %d%s %s\n", n, sep, cut(strings.TrimRight(l, "\r"), matchWidth))
		}
	}
	return b.String()
}

// writeCuts says why a result is partial.
func writeCuts(b *strings.Builder, cuts []string, total, shown int, lim Limits) {
	for _, c := range cuts {
		switch c {
		case CutMatches:
			fmt.Fprintf(b, "(showing the first %d of %d matches; narrow the paths or globs to see the rest)\n", shown, total)
		case CutOutput:
			fmt.Fprintf(b, "(ast-grep's output passed %d KiB and was cut at the last complete match; there are more matches than counted here)\n", lim.MaxOutput>>10)
		case CutTimeout:
			fmt.Fprintf(b, "(ast-grep was stopped after %s, its time limit; the result is partial: truncated by the timeout)\n", lim.Timeout)
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// cut escapes line breaks and cuts s to width characters, marking a cut
// with "...".
func cut(s string, width int) string {
	s = strings.TrimPrefix(s, "\ufeff")
	s = strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	n := 0
	for i := range s {
		if n == width {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// oneLine joins the lines of s and cuts it to width bytes.
func oneLine(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	return clip(s, width)
}

// FormatReplace renders a replace result as text: a mode tag (dry run or
// applied) with the count, then per file each change as an "original →
// replacement" pair, each side cut to 60 characters, and for a dry run
// how to apply it.
func FormatReplace(res *ReplaceResult, lim Limits) string {
	lim = lim.withDefaults()
	var b strings.Builder
	tag := "[dry run]"
	if res.Applied {
		tag = "[applied]"
	}
	if res.Total == 0 {
		fmt.Fprintf(&b, "%s No matches to replace.\n", tag)
		for _, w := range res.Warnings {
			fmt.Fprintf(&b, "ast-grep said: %s\n", oneLine(w, 400))
		}
		for _, h := range res.Hints {
			fmt.Fprintf(&b, "Hint: %s\n", h)
		}
		writeCuts(&b, res.TruncatedBy, 0, 0, lim)
		return b.String()
	}
	fmt.Fprintf(&b, "%s %s in %s\n", tag, plural(res.Total, "replacement", "replacements"), plural(len(res.Files), "file", "files"))
	writeCuts(&b, res.TruncatedBy, res.Total, res.Total, lim)
	if res.Overlapping > 0 {
		fmt.Fprintf(&b, "(%s inside another match left as they are; run the replace again for those)\n", plural(res.Overlapping, "match", "matches"))
	}
	shown := 0
	for _, f := range res.Files {
		fmt.Fprintf(&b, "\n%s\n", f.Path)
		for _, e := range f.Edits {
			if shown == lim.MaxMatches {
				break
			}
			shown++
			fmt.Fprintf(&b, "  %d: %s → %s\n", e.Line, cut(e.Original, pairWidth), cut(e.Replacement, pairWidth))
		}
	}
	if shown < res.Total {
		fmt.Fprintf(&b, "(listed the first %d of %d replacements)\n", shown, res.Total)
	}
	if !res.Applied {
		b.WriteString("\nNothing was written. To write these changes, run the replace again with dryRun set to false (slim search replace --apply).\n")
	}
	return b.String()
}
