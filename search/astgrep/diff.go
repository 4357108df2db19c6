package astgrep

import (
	"fmt"
	"sort"
	"strings"

	"github.com/slimgate/slim/internal/unidiff"
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

// fileDiff renders the unified diff of old against new, where new is old
// with the spans applied (their repl as written) and, at the very end, the
// final line break kept as it was. Each changed region is a run of whole
// lines: old lines [A0, A1) and the new lines [B0, B1) that replace them.
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
	var regs []unidiff.Block
	for _, br := range brs {
		b0, b1 := br.a0+br.delta0, br.a1+br.delta1
		if br.a1 == len(old) || b1 > len(new) {
			b1 = len(new)
		}
		if b0 > len(new) && br.a0 > 0 {
			// The region removed the file's last line, and with it the line
			// break before it (the file had no final break to keep): the
			// line that break ended belongs to the region too.
			br.a0 = os[lineOf(os, br.a0-1)]
			b0 = br.a0 + br.delta0
		}
		r := unidiff.Block{A0: lineOf(os, br.a0), A1: nOld, B0: lineOf(ns, b0), B1: nNew}
		if br.a1 < len(old) {
			r.A1 = lineOf(os, br.a1)
		}
		if b1 < len(new) {
			r.B1 = lineOf(ns, b1)
		}
		if br.a0 == len(old) {
			r.A0 = nOld
		}
		if b0 == len(new) {
			r.B0 = nNew
		}
		regs = append(regs, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", name, name)
	unidiff.WriteHunks(&b, regs, nOld, nNew, diffContext, func(fromOld bool, i int) (string, bool) {
		data, starts := new, ns
		if fromOld {
			data, starts = old, os
		}
		s := string(data[starts[i]:starts[i+1]])
		t := strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
		return t, len(t) < len(s)
	})
	return b.String()
}
