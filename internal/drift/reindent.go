package drift

import (
	"math/rand/v2"
	"strings"
	"unicode"
)

// This file holds the drifts a rescue must see through whole: one
// mapping of leading whitespace over every line of the chunk
// (Reindented), an edited first or last context line (EditedEdge), and
// an edit that is already in the file (AlreadyApplied).
//
// Added lines follow a mapping of leading whitespace the way a careful
// person re-indents them: through the same mapping where their
// indentation is in its domain, as written otherwise, blank ones as they
// are.

// The variants of Reindented.
const (
	reindentFormatter   = iota // the whole file: each leading tab became four spaces
	reindentPatchSpaces        // the author's copy had four spaces for each leading tab
	reindentWrapped            // a block around the chunk got one more leading tab
	reindentDedented           // a block around the chunk lost one leading tab
)

// mapLines applies f to every line that is not blank.
func mapLines(lines []string, f func(string) string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			out[i] = l
		} else {
			out[i] = f(l)
		}
	}
	return out
}

func nonBlank(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

// reindent drifts the indentation of the chunk by one mapping.
func (c *Case) reindent(r *rand.Rand) bool {
	os, oe := c.Patch.OldStart, c.Patch.OldEnd
	if nonBlank(Texts(c.View[os:oe])) < 2 {
		return false // a lone line could sit at any level
	}
	n := len(c.Disk)
	changedOld := func() bool {
		for i := os; i < oe; i++ {
			if c.Disk[i].Text != c.View[i].Text {
				return true
			}
		}
		return false
	}
	switch c.variant {
	case reindentFormatter:
		for i := range c.Disk {
			c.Disk[i].Text = tabsToSpaces(c.Disk[i].Text)
		}
		c.DiskAdd = mapLines(c.Edit.Add, tabsToSpaces)
	case reindentPatchSpaces:
		// View and DiskAdd were set up in build; the disk keeps its tabs.
	case reindentWrapped:
		lo, hi := max(0, os-r.IntN(4)), min(n, oe+r.IntN(4))
		for i := lo; i < hi; i++ {
			if strings.TrimSpace(c.Disk[i].Text) != "" {
				c.Disk[i].Text = "\t" + c.Disk[i].Text
			}
		}
		c.DiskAdd = mapLines(c.Edit.Add, func(s string) string { return "\t" + s })
	case reindentDedented:
		for i := os; i < oe; i++ {
			if t := c.Disk[i].Text; strings.TrimSpace(t) != "" && !strings.HasPrefix(t, "\t") {
				return false
			}
		}
		lo, hi := os, oe
		for lo > 0 && strings.HasPrefix(c.Disk[lo-1].Text, "\t") {
			lo--
		}
		for hi < n && strings.HasPrefix(c.Disk[hi].Text, "\t") {
			hi++
		}
		for i := lo; i < hi; i++ {
			c.Disk[i].Text = strings.TrimPrefix(c.Disk[i].Text, "\t")
		}
		c.DiskAdd = mapLines(c.Edit.Add, func(s string) string { return strings.TrimPrefix(s, "\t") })
	}
	if c.variant != reindentPatchSpaces && !changedOld() {
		return false
	}
	c.Why = "one mapping of leading whitespace over the chunk"
	return true
}

// editEdge edits the chunk's first or last context line the way someone
// else would while the author was busy: a comment appended, a digit
// changed, or a trailing brace moved to the next line. The edited line is
// not next to a changed line (the chunk has two context lines on that
// side), it is not blank, and the chunk without it still names one place.
func (c *Case) editEdge(r *rand.Rand) bool {
	os, oe := c.Patch.OldStart, c.Patch.OldEnd
	e := c.Edit
	first := r.IntN(2) == 0
	for try := 0; try < 2; try, first = try+1, !first {
		i := os
		if !first {
			i = oe - 1
		}
		// The edited line and its neighbour inside the chunk are context.
		if first && e.Start-os < 2 || !first && oe-(e.Start+e.Del) < 2 {
			continue
		}
		old := c.Disk[i].Text
		if strings.TrimSpace(old) == "" {
			continue
		}
		edited, ok := editLine(r, old)
		if !ok {
			continue
		}
		rest := Texts(c.View[os:oe])
		if first {
			rest = rest[1:]
		} else {
			rest = rest[:len(rest)-1]
		}
		if countBlock(c.View, rest) != 1 {
			continue
		}
		c.Disk[i].Text = edited
		c.Why = "edge context line edited; the rest names one place"
		return true
	}
	return false
}

// editLine edits a line so that it stays clearly the same line.
func editLine(r *rand.Rand, s string) (string, bool) {
	body := strings.TrimSpace(s)
	switch r.IntN(3) {
	case 1:
		if len(body) >= 8 {
			for j := len(s) - 1; j >= 0; j-- {
				if unicode.IsDigit(rune(s[j])) {
					return s[:j] + string(rune('0'+(s[j]-'0'+1)%10)) + s[j+1:], true
				}
			}
		}
	case 2:
		if len(body) >= 8 && strings.HasSuffix(s, " {") {
			return strings.TrimSuffix(s, " {"), true
		}
	}
	return s + " // edited by someone else", true
}

// alreadyApplied puts the edit on disk before the patch comes: a correct
// apply leaves the file as it is.
func (c *Case) alreadyApplied() bool {
	e := c.Edit
	if e.Del == 0 && len(e.Add) == 0 {
		return false
	}
	done := Split(Apply(c.Disk, e.Start, e.Del, e.Add))
	c.Disk = done
	c.Done = true
	c.Why = "the edit is already in the file"
	return true
}
