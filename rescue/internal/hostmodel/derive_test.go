package hostmodel

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// referenceDerive is the host model's Update derivation written the plain
// way (split into strings, splice each replacement from the last to the
// first, join): derive must give the same bytes for every input.
func referenceDerive(abs string, chunks []chunk, text string) (string, error) {
	bom := strings.HasPrefix(text, bomChar)
	text = strings.TrimPrefix(text, bomChar)
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	seek := func(pattern []string, start int) int {
		if len(pattern) == 0 {
			return -1
		}
		for _, eq := range rungs {
		next:
			for p := start; p <= len(lines)-len(pattern); p++ {
				for k, s := range pattern {
					if !eq(lines[p+k], s) {
						continue next
					}
				}
				return p
			}
		}
		return -1
	}
	var rs []repl
	cursor := 0
	for _, c := range chunks {
		if c.ctx != "" {
			p := seek([]string{c.ctx}, cursor)
			if p < 0 {
				return "", fmt.Errorf("Failed to find context '%s' in %s", c.ctx, abs)
			}
			cursor = p + 1
		}
		if len(c.old) == 0 {
			at := len(lines)
			if at > 0 && lines[at-1] == "" {
				at--
			}
			rs = append(rs, repl{at, 0, c.new})
			continue
		}
		old, nw := c.old, c.new
		p := seek(old, cursor)
		if p < 0 && old[len(old)-1] == "" {
			old = old[:len(old)-1]
			if len(nw) > 0 && nw[len(nw)-1] == "" {
				nw = nw[:len(nw)-1]
			}
			p = seek(old, cursor)
		}
		if p < 0 {
			return "", fmt.Errorf("Failed to find expected lines in %s:\n%s", abs, strings.Join(c.old, "\n"))
		}
		rs = append(rs, repl{p, len(old), nw})
		cursor = p + len(old)
	}
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].start < rs[j-1].start; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	out := append([]string(nil), lines...)
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		s, e := min(r.start, len(out)), min(r.start+r.del, len(out))
		tail := append([]string(nil), out[e:]...)
		out = append(append(out[:s], r.add...), tail...)
	}
	if len(out) == 0 || out[len(out)-1] != "" {
		out = append(out, "")
	}
	content := strings.Join(out, "\n")
	if strings.HasPrefix(content, bomChar) {
		bom = true
		content = content[len(bomChar):]
	}
	if bom {
		content = bomChar + content
	}
	return content, nil
}

// TestHostDeriveMatchesReference compares derive with the plain
// derivation on random small files and chunks: overlapping and out-of-order
// replacements, insertions, @@ contexts, trailing empty lines, BOMs, CRs,
// whitespace and typographic drift.
func TestHostDeriveMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	words := []string{"", "a", "b", " a", "a ", "\u201cq\u201d", "\"q\"", "c\r", bomChar + "a", "\u00a0b"}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = words[r.IntN(len(words))]
		}
		return out
	}
	for iter := 0; iter < 20000; iter++ {
		var text string
		if r.IntN(4) == 0 {
			text = bomChar
		}
		text += strings.Join(pick(r.IntN(8)), "\n")
		if r.IntN(2) == 0 {
			text += "\n"
		}
		var chunks []chunk
		for c := r.IntN(4); c > 0; c-- {
			ch := chunk{old: pick(r.IntN(3)), new: pick(r.IntN(3))}
			if r.IntN(4) == 0 {
				ch.ctx = words[1+r.IntN(len(words)-1)]
			}
			chunks = append(chunks, ch)
		}
		want, werr := referenceDerive("f", chunks, text)
		got, gerr := derive("f", chunks, text, nil)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("text %q chunks %q: error %v, want %v", text, chunks, gerr, werr)
		}
		if werr == nil && string(got) != want {
			t.Fatalf("text %q chunks %q:\ngot  %q\nwant %q", text, chunks, got, want)
		}
		if werr != nil {
			continue
		}
		// With an expectation, right or wrong, the result is the same.
		for _, expect := range []string{want, want + "x", strings.TrimSuffix(want, "\n"), "", "\n" + want} {
			got, err := derive("f", chunks, text, []byte(expect))
			if err != nil || string(got) != want {
				t.Fatalf("text %q chunks %q expecting %q: got %q, %v; want %q", text, chunks, expect, got, err, want)
			}
		}
	}
}
