package drift

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Edit replaces Del lines starting at line Start (0-based) with Add. Del == 0
// is a pure insertion before line Start; an empty Add is a deletion.
type Edit struct {
	Start int
	Del   int
	Add   []string
}

// RandomEdit picks a replace, insert or delete of 1 to 5 lines somewhere in a
// text of n lines (n >= 1). Added lines borrow the indentation of the line
// they replace or follow and carry a serial number, so they are new text.
func RandomEdit(r *rand.Rand, lines []Line) Edit {
	n := len(lines)
	var e Edit
	switch r.IntN(3) {
	case 0: // replace
		e.Del = 1 + r.IntN(5)
		e.Add = make([]string, 1+r.IntN(5))
	case 1: // insert
		e.Add = make([]string, 1+r.IntN(5))
	default: // delete
		e.Del = 1 + r.IntN(5)
	}
	if e.Del > n {
		e.Del = n
	}
	e.Start = r.IntN(n - e.Del + 1)
	fillAdd(r, lines, &e)
	return e
}

// EditNear is RandomEdit with the edited region placed so that its trailing
// context reaches the end of the text (the chunk ends with "*** End of File").
func EditNear(r *rand.Rand, lines []Line, ctx int) Edit {
	e := RandomEdit(r, lines)
	n := len(lines)
	lo := n - e.Del - ctx
	if lo < 0 {
		lo = 0
	}
	e.Start = lo + r.IntN(n-e.Del-lo+1)
	fillAdd(r, lines, &e)
	return e
}

var addTemplates = []string{
	`x%d := compute(%d)`,
	`// edited line %d (%d)`,
	`return fmt.Errorf("edited %d: %%w", err%d)`,
	`s%d := 'q' + %d`,
	`if v%d > %d {`,
	`}`,
	``,
}

func fillAdd(r *rand.Rand, lines []Line, e *Edit) {
	indent := ""
	if len(lines) > 0 {
		ref := e.Start
		if ref >= len(lines) {
			ref = len(lines) - 1
		}
		t := lines[ref].Text
		indent = t[:len(t)-len(strings.TrimLeft(t, " \t"))]
	}
	for i := range e.Add {
		tmpl := addTemplates[r.IntN(len(addTemplates))]
		if tmpl == "" || tmpl == "}" {
			e.Add[i] = tmpl
			if tmpl == "}" {
				e.Add[i] = indent + tmpl
			}
			continue
		}
		k := r.IntN(1_000_000)
		e.Add[i] = indent + strings.ReplaceAll(fmt.Sprintf(tmpl, k, i), "%%", "%")
	}
}

// Header selects how a written chunk starts.
type Header int

const (
	HeaderBare  Header = iota // "@@"
	HeaderScope               // "@@ <nearest func or type line above>", or "@@" when there is none
	HeaderNone                // no "@@" line: a first chunk may leave it out (a repair)
)

func (h Header) String() string {
	switch h {
	case HeaderBare:
		return "bare"
	case HeaderScope:
		return "scope"
	default:
		return "none"
	}
}

// Patch is a written single-chunk Update patch and where its parts lie in the
// text it was written against.
type Patch struct {
	Text string
	// Old lines of the chunk are view lines [OldStart, OldEnd): leading
	// context, the removed lines, trailing context.
	OldStart, OldEnd int
	// Scope is the view line named by the "@@ " header, or -1.
	Scope int
	// EOF is set when the trailing context reaches the end of the text and
	// the chunk ends with "*** End of File".
	EOF bool
}

// WritePatch writes the Codex patch for e against view (the text as the
// author read it), with ctx lines of context on each side.
func WritePatch(path string, view []Line, e Edit, ctx int, h Header) Patch {
	n := len(view)
	p := Patch{Scope: -1}
	p.OldStart = max(0, e.Start-ctx)
	p.OldEnd = min(n, e.Start+e.Del+ctx)
	p.EOF = p.OldEnd == n
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	fmt.Fprintf(&b, "*** Update File: %s\n", path)
	switch h {
	case HeaderBare:
		b.WriteString("@@\n")
	case HeaderScope:
		p.Scope = scopeAbove(view, p.OldStart)
		if p.Scope >= 0 {
			fmt.Fprintf(&b, "@@ %s\n", view[p.Scope].Text)
		} else {
			b.WriteString("@@\n")
		}
	}
	line := func(op byte, s string) {
		b.WriteByte(op)
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for i := p.OldStart; i < e.Start; i++ {
		line(' ', view[i].Text)
	}
	for i := e.Start; i < e.Start+e.Del; i++ {
		line('-', view[i].Text)
	}
	for _, a := range e.Add {
		line('+', a)
	}
	for i := e.Start + e.Del; i < p.OldEnd; i++ {
		line(' ', view[i].Text)
	}
	if p.EOF {
		b.WriteString("*** End of File\n")
	}
	b.WriteString("*** End Patch\n")
	p.Text = b.String()
	return p
}

// scopeAbove returns the nearest line above before that opens a Go function
// or type declaration, or -1.
func scopeAbove(view []Line, before int) int {
	for i := before - 1; i >= 0; i-- {
		t := view[i].Text
		if strings.HasPrefix(t, "func ") || strings.HasPrefix(t, "type ") {
			return i
		}
	}
	return -1
}

// SpreadEdits returns k random edits spread evenly over lines, sorted, with
// old-line spans (ctx lines of context on each side) that neither overlap
// nor touch. It returns fewer when the text is too short.
func SpreadEdits(r *rand.Rand, lines []Line, k, ctx int) []Edit {
	n := len(lines)
	if k <= 0 || n == 0 {
		return nil
	}
	slot := n / k
	var out []Edit
	prevEnd := 0 // end of the previous old-line span
	for i := 0; i < k; i++ {
		lo, hi := i*slot, (i+1)*slot
		if i == k-1 {
			hi = n
		}
		e := RandomEdit(r, lines[lo:hi])
		e.Start += lo
		if max(0, e.Start-ctx) < prevEnd || e.Start+e.Del > n {
			continue
		}
		fillAdd(r, lines, &e)
		out = append(out, e)
		prevEnd = e.Start + e.Del + ctx + 1
	}
	return out
}

// UpdateHunk writes one "*** Update File:" hunk (no envelope) with a bare
// "@@" chunk per edit, ctx lines of context on each side. Edits are in view
// coordinates, sorted, and their old-line spans must not overlap. A chunk
// whose context reaches the end of the text ends with "*** End of File".
func UpdateHunk(path string, view []Line, edits []Edit, ctx int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*** Update File: %s\n", path)
	for _, e := range edits {
		p := WritePatch(path, view, e, ctx, HeaderBare)
		body := strings.TrimPrefix(p.Text, "*** Begin Patch\n*** Update File: "+path+"\n")
		b.WriteString(strings.TrimSuffix(body, "*** End Patch\n"))
	}
	return b.String()
}
