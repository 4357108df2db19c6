package astgrep

import (
	"fmt"
	"sort"
	"strings"
)

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// lineStarts returns the offset of every line of data (a line ends after
// LF, CRLF or a lone CR), and len(data) as a last entry.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	if starts[len(starts)-1] != len(data) {
		starts = append(starts, len(data))
	}
	return starts
}

// lineOf is the index of the line holding offset off.
func lineOf(starts []int, off int) int {
	i := sort.SearchInts(starts, off+1) - 1
	if i < 0 {
		i = 0
	}
	if i > len(starts)-2 {
		i = len(starts) - 2
	}
	return i
}

// region is a run of whole lines that changed: old lines [la0, la1) and
// the new lines [lb0, lb1) that replace them.
type region struct{ la0, la1, lb0, lb1 int }

// fileDiff renders the unified diff of old against new, where new is old
// with the spans applied (their repl as written) and, at the very end, the
// final line break kept as it was.
func fileDiff(name string, old, new []byte, spans []span) string {
	if len(spans) == 0 {
		return ""
	}
	os, ns := lineStarts(old), lineStarts(new)
	nOld, nNew := len(os)-1, len(ns)-1
	if len(old) == 0 {
		nOld = 0
	}
	if len(new) == 0 {
		nNew = 0
	}
	// Byte regions first, line-aligned in old, merged when they touch.
	type byteRegion struct{ a0, a1, delta0, delta1 int }
	var brs []byteRegion
	delta := 0
	for _, s := range spans {
		a0 := os[lineOf(os, s.start)]
		endAt := s.end
		if endAt > s.start {
			endAt--
		}
		a1 := os[lineOf(os, endAt)+1]
		d := len(s.repl) - (s.end - s.start)
		if n := len(brs); n > 0 && a0 <= brs[n-1].a1 {
			if a1 > brs[n-1].a1 {
				brs[n-1].a1 = a1
			}
			brs[n-1].delta1 += d
		} else {
			brs = append(brs, byteRegion{a0: a0, a1: a1, delta0: delta, delta1: delta + d})
		}
		delta += d
	}
	var regs []region
	for _, br := range brs {
		b0, b1 := br.a0+br.delta0, br.a1+br.delta1
		if br.a1 == len(old) || b1 > len(new) {
			b1 = len(new)
		}
		r := region{la0: lineOf(os, br.a0), la1: nOld, lb0: lineOf(ns, b0), lb1: nNew}
		if br.a1 < len(old) {
			r.la1 = lineOf(os, br.a1)
		}
		if b1 < len(new) {
			r.lb1 = lineOf(ns, b1)
		}
		if br.a0 == len(old) {
			r.la0 = nOld
		}
		if b0 == len(new) {
			r.lb0 = nNew
		}
		regs = append(regs, r)
	}
	line := func(data []byte, starts []int, i int) (string, bool) {
		s := string(data[starts[i]:starts[i+1]])
		t := strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
		return t, len(t) < len(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	for i := 0; i < len(regs); {
		j := i
		for j+1 < len(regs) && regs[j+1].la0-regs[j].la1 <= 2*diffContext {
			j++
		}
		first, last := regs[i], regs[j]
		a0 := max(first.la0-diffContext, 0)
		a1 := min(last.la1+diffContext, nOld)
		b0 := first.lb0 - (first.la0 - a0)
		b1 := last.lb1 + (a1 - last.la1)
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", hunkRange(a0, a1-a0), hunkRange(b0, b1-b0))
		emit := func(prefix string, data []byte, starts []int, k int) {
			t, ended := line(data, starts, k)
			b.WriteString(prefix + t + "\n")
			if !ended {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
		at := a0
		for k := i; k <= j; k++ {
			r := regs[k]
			for ; at < r.la0; at++ {
				emit(" ", old, os, at)
			}
			for x := r.la0; x < r.la1; x++ {
				emit("-", old, os, x)
			}
			for x := r.lb0; x < r.lb1; x++ {
				emit("+", new, ns, x)
			}
			at = r.la1
		}
		for ; at < a1; at++ {
			emit(" ", old, os, at)
		}
		i = j + 1
	}
	return b.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
