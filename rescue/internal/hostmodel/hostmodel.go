// Package hostmodel models the apply_patch tool of the pinned host,
// opencode-ai 1.18.33 (the profile rescue reports as HostProfile), closely
// enough to predict the bytes it writes for a patch slim hands on. slim
// hands a rewritten patch on only when this model says the host writes
// exactly the text slim intends; otherwise it refuses.
// The model, read from the host's shipped code:
//
//   - Parsing: the text is trimmed and split on LF only, so a CR stays in
//     the line. Begin and End are the first lines equal to the markers
//     after trimming. Lines the parser does not know are skipped: body lines
//     before the first @@, blank lines in chunks, junk between hunks. The @@
//     text is trimmed. "*** End of File" is never honoured.
//   - An Add's content is its "+" lines joined with LF, plus LF unless empty
//     or already ending with LF. It overwrites.
//   - An Update reads the file from disk (never the result of an earlier
//     hunk), sets a BOM aside, splits on LF and drops one trailing empty
//     element. Each @@ text must be found from the cursor; a chunk's old
//     lines are searched from the cursor, taking the first match on the
//     rungs exact, trim-end, trim, and fold+trim; a miss is retried without
//     a trailing empty old line. A pure insertion goes to the end of the
//     file (before a last empty line). The result always ends with LF
//     unless it is empty; the BOM is restored.
//   - Move writes the destination and then removes the source; Delete
//     removes. Every hunk is planned before anything is written.
//
// The model works on the snapshot slim read, never on the disk.
package hostmodel

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/slimgate/slim/rescue/internal/jsstr"
	"github.com/slimgate/slim/rescue/internal/patch"
	"github.com/slimgate/slim/worktree/hostpath"
)

// File is a file as the host model sees it.
type File struct {
	Data []byte
	// Text, when set, is Data as a string (the snapshot's parsed text), so
	// the model need not copy the file again.
	Text   string
	Exists bool
	Dir    bool // exists, but is not a regular file
}

// Result is the host's outcome: for each resolved path it wrote or
// removed, the final bytes (nil when removed), in write order.
type Result struct {
	Paths  []string
	Finals map[string][]byte
}

// Error is a failure of the host on a patch, with the path it was
// working on.
type Error struct {
	Path string // "" when the failure concerns the whole patch
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

type chunk struct {
	old, new []string
	ctx      string
}

type hunk struct {
	kind    patch.HunkKind
	path    string
	move    string
	content string
	chunks  []chunk
}

// parse parses patch text the way the host does.
func parse(text string) ([]hunk, error) {
	lines := strings.Split(jsstr.Trim(text), "\n")
	begin, end := -1, -1
	for i, l := range lines {
		if begin < 0 && jsstr.Trim(l) == patch.BeginMarker {
			begin = i
		}
		if end < 0 && jsstr.Trim(l) == patch.EndMarker {
			end = i
		}
	}
	if begin < 0 || end < 0 || begin >= end {
		return nil, &Error{Msg: "Invalid patch format: missing Begin/End markers"}
	}
	var hunks []hunk
	for i := begin + 1; i < end; {
		l := lines[i]
		var h hunk
		next := i + 1
		switch {
		case strings.HasPrefix(l, patch.AddHeader):
			h = hunk{kind: patch.HunkAdd, path: jsstr.Trim(l[len(patch.AddHeader):])}
		case strings.HasPrefix(l, patch.DeleteHeader):
			h = hunk{kind: patch.HunkDelete, path: jsstr.Trim(l[len(patch.DeleteHeader):])}
		case strings.HasPrefix(l, patch.UpdateHeader):
			h = hunk{kind: patch.HunkUpdate, path: jsstr.Trim(l[len(patch.UpdateHeader):])}
			if next < len(lines) && strings.HasPrefix(lines[next], patch.MoveHeader) {
				h.move = jsstr.Trim(lines[next][len(patch.MoveHeader):])
				next++
			}
		default:
			i++
			continue
		}
		if h.path == "" {
			i++
			continue
		}
		switch h.kind {
		case patch.HunkAdd:
			var b strings.Builder
			for next < len(lines) && !strings.HasPrefix(lines[next], "***") {
				if strings.HasPrefix(lines[next], "+") {
					b.WriteString(lines[next][1:])
					b.WriteByte('\n')
				}
				next++
			}
			h.content = strings.TrimSuffix(b.String(), "\n")
		case patch.HunkUpdate:
			for next < len(lines) && !strings.HasPrefix(lines[next], "***") {
				if !strings.HasPrefix(lines[next], "@@") {
					next++
					continue
				}
				c := chunk{ctx: jsstr.Trim(lines[next][2:])}
				next++
				for next < len(lines) && !strings.HasPrefix(lines[next], "@@") && !strings.HasPrefix(lines[next], "***") {
					s := lines[next]
					switch {
					case strings.HasPrefix(s, " "):
						c.old = append(c.old, s[1:])
						c.new = append(c.new, s[1:])
					case strings.HasPrefix(s, "-"):
						c.old = append(c.old, s[1:])
					case strings.HasPrefix(s, "+"):
						c.new = append(c.new, s[1:])
					}
					next++
				}
				h.chunks = append(h.chunks, c)
			}
		}
		hunks = append(hunks, h)
		i = next
	}
	return hunks, nil
}

// fold is the host's fold of typographic characters.
func fold(s string) string {
	if jsstr.IsASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x2018 && r <= 0x201B:
			b.WriteByte('\'')
		case r >= 0x201C && r <= 0x201F:
			b.WriteByte('"')
		case r >= 0x2010 && r <= 0x2015:
			b.WriteByte('-')
		case r == 0x2026:
			b.WriteString("...")
		case r == 0x00A0:
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var rungs = []func(a, b string) bool{
	func(a, b string) bool { return a == b },
	func(a, b string) bool { return jsstr.TrimEnd(a) == jsstr.TrimEnd(b) },
	func(a, b string) bool { return jsstr.Trim(a) == jsstr.Trim(b) },
	func(a, b string) bool { return fold(jsstr.Trim(a)) == fold(jsstr.Trim(b)) },
}

// textLines is a text split on LF the way the host splits it, with one
// trailing empty element dropped; the lines are slices of the text, found
// by their offsets, so splitting allocates no string per line.
type textLines struct {
	s string
	// starts[i] is where line i begins; starts[n] is one past the end of
	// the last line's terminator (or len(s)+1 when it has none).
	starts []int
	n      int
}

func splitLines(s string) *textLines {
	h := &textLines{s: s, starts: make([]int, 0, strings.Count(s, "\n")+2)}
	h.starts = append(h.starts, 0)
	for off := 0; ; {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		h.starts = append(h.starts, off)
	}
	h.starts = append(h.starts, len(s)+1)
	h.n = len(h.starts) - 1
	if h.line(h.n-1) == "" {
		h.n--
	}
	return h
}

// line returns line i without its LF.
func (h *textLines) line(i int) string { return h.s[h.starts[i] : h.starts[i+1]-1] }

// span returns lines [a, b) joined with LF, as one slice of the text.
func (h *textLines) span(a, b int) string { return h.s[h.starts[a] : h.starts[b]-1] }

// seek returns the first position at or after start where pattern
// matches, trying each rung over the whole range before the next.
func seek(lines *textLines, pattern []string, start int) int {
	if len(pattern) == 0 {
		return -1
	}
	for _, eq := range rungs {
	next:
		for p := start; p <= lines.n-len(pattern); p++ {
			for k, s := range pattern {
				if !eq(lines.line(p+k), s) {
					continue next
				}
			}
			return p
		}
	}
	return -1
}

const bomChar = "\uFEFF"

// repl is one chunk's replacement: del lines at start become add.
type repl struct {
	start, del int
	add        []string
}

// derive computes an Update's new content from the file's text. want,
// when not nil, is the content expected; it is returned itself when the
// derivation gives exactly those bytes.
func derive(abs string, chunks []chunk, text string, want []byte) ([]byte, error) {
	bom := strings.HasPrefix(text, bomChar)
	text = strings.TrimPrefix(text, bomChar)
	lines := splitLines(text)
	var rs []repl
	cursor := 0
	for _, c := range chunks {
		if c.ctx != "" {
			p := seek(lines, []string{c.ctx}, cursor)
			if p < 0 {
				return nil, fmt.Errorf("Failed to find context '%s' in %s", c.ctx, abs)
			}
			cursor = p + 1
		}
		if len(c.old) == 0 {
			at := lines.n
			if at > 0 && lines.line(at-1) == "" {
				at--
			}
			rs = append(rs, repl{at, 0, c.new})
			continue
		}
		old, nw := c.old, c.new
		p := seek(lines, old, cursor)
		if p < 0 && old[len(old)-1] == "" {
			old = old[:len(old)-1]
			if len(nw) > 0 && nw[len(nw)-1] == "" {
				nw = nw[:len(nw)-1]
			}
			p = seek(lines, old, cursor)
		}
		if p < 0 {
			return nil, fmt.Errorf("Failed to find expected lines in %s:\n%s", abs, strings.Join(c.old, "\n"))
		}
		rs = append(rs, repl{p, len(old), nw})
		cursor = p + len(old)
	}
	// A stable sort by start, then splice from the last to the first.
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && rs[j].start < rs[j-1].start; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	// With an expected result, first check the derivation against it
	// without writing anything: when it agrees, the expected bytes are the
	// result (the usual case for a verified rewrite).
	if want != nil && !bom {
		j := joiner{want: want}
		splice(&j, lines, rs)
		if j.finish() != nil {
			return want, nil
		}
	}
	var j joiner
	j.init(len(text), rs, bom)
	splice(&j, lines, rs)
	return j.finish(), nil
}

// splice writes the lines with the replacements spliced in, as the host
// does: sorted by start, spliced from the last to the first.
func splice(j *joiner, lines *textLines, rs []repl) {
	if disjoint(rs, lines.n) {
		// Each splice leaves the lines before it alone, so one forward pass
		// gives the same list (and the unchanged runs are slices of text).
		pos := 0
		for _, r := range rs {
			j.span(lines, pos, r.start)
			j.lines(r.add)
			pos = r.start + r.del
		}
		j.span(lines, pos, lines.n)
		return
	}
	out := make([]string, lines.n)
	for i := range out {
		out[i] = lines.line(i)
	}
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		s, e := r.start, r.start+r.del
		if s > len(out) {
			s = len(out)
		}
		if e > len(out) {
			e = len(out)
		}
		tail := append([]string(nil), out[e:]...)
		out = append(append(out[:s], r.add...), tail...)
	}
	j.lines(out)
}

// disjoint reports whether the sorted replacements lie inside n lines and
// do not overlap, so that they can be applied in one forward pass.
func disjoint(rs []repl, n int) bool {
	for i, r := range rs {
		if r.start+r.del > n || (i+1 < len(rs) && r.start+r.del > rs[i+1].start) {
			return false
		}
	}
	return true
}

// joiner writes the host's result: the lines joined with LF, one more
// LF unless the list is empty or ends with an empty line, and the BOM.
//
// In compare mode (want set) nothing is written: each piece is checked
// against want, and finish returns want when all of it matched, else nil.
type joiner struct {
	b      []byte
	head   int // where the content starts (after a BOM)
	count  int
	last   string
	hadBOM bool

	want []byte
	off  int  // compare mode: bytes of want matched so far
	bad  bool // compare mode: a piece differed
}

// put writes s, or compares it with want at the current offset.
func (j *joiner) put(s string) {
	if j.want == nil {
		j.b = append(j.b, s...)
		return
	}
	if j.bad || len(j.want)-j.off < len(s) || string(j.want[j.off:j.off+len(s)]) != s {
		j.bad = true
		return
	}
	j.off += len(s)
}

func (j *joiner) init(size int, rs []repl, bom bool) {
	for _, r := range rs {
		for _, a := range r.add {
			size += len(a) + 1
		}
	}
	j.b = make([]byte, 0, size+len(bomChar)+1)
	if bom {
		j.b = append(j.b, bomChar...)
	}
	j.head, j.hadBOM = len(j.b), bom
}

func (j *joiner) line(s string) {
	if j.count > 0 {
		j.put("\n")
	}
	j.put(s)
	j.count++
	j.last = s
}

func (j *joiner) lines(ls []string) {
	for _, s := range ls {
		j.line(s)
	}
}

// span writes lines [a, b) of h.
func (j *joiner) span(h *textLines, a, b int) {
	if a >= b {
		return
	}
	j.line(h.span(a, b))
	j.count += b - a - 1
	j.last = h.line(b - 1)
}

func (j *joiner) finish() []byte {
	if j.count == 0 || j.last != "" {
		j.line("")
	}
	if j.want != nil {
		if j.bad || j.off != len(j.want) {
			return nil
		}
		return j.want
	}
	// A content that starts with a BOM counts as one BOM: it is set aside
	// and put back once.
	if j.hadBOM && bytes.HasPrefix(j.b[j.head:], []byte(bomChar)) {
		j.b = append(j.b[:j.head], j.b[j.head+len(bomChar):]...)
	}
	return j.b
}

// Apply runs the host model on the patch text, with relative paths
// resolved against dir by the path rules of flavor. read returns the
// snapshot of a resolved path; want, when not nil, returns its expected
// content (nil when unknown), so an Update whose result equals it is checked
// without building a copy of the file. A failure of the host is an *Error.
func Apply(text, dir string, flavor hostpath.Flavor, read func(abs string) File, want func(abs string) []byte) (*Result, error) {
	hunks, err := parse(text)
	if err != nil {
		return nil, err
	}
	if len(hunks) == 0 {
		return nil, &Error{Msg: "no hunks found"}
	}
	f := flavor.Concrete()
	type write struct {
		path   string
		data   []byte
		remove bool
	}
	var plan []write
	for _, h := range hunks {
		abs := f.Resolve(dir, h.path)
		switch h.kind {
		case patch.HunkAdd:
			c := h.content
			if c != "" && !strings.HasSuffix(c, "\n") {
				c += "\n"
			}
			plan = append(plan, write{path: abs, data: []byte(c)})
		case patch.HunkDelete:
			hf := read(abs)
			if !hf.Exists || hf.Dir {
				return nil, &Error{Path: abs, Msg: "Failed to read file for deletion: " + abs}
			}
			plan = append(plan, write{path: abs, remove: true})
		case patch.HunkUpdate:
			hf := read(abs)
			if !hf.Exists || hf.Dir {
				return nil, &Error{Path: abs, Msg: "Failed to read file to update: " + abs}
			}
			text := hf.Text
			if len(text) != len(hf.Data) {
				text = string(hf.Data)
			}
			var expect []byte
			if want != nil {
				if h.move != "" {
					expect = want(f.Resolve(dir, h.move))
				} else {
					expect = want(abs)
				}
			}
			content, err := derive(abs, h.chunks, text, expect)
			if err != nil {
				return nil, &Error{Path: abs, Msg: err.Error()}
			}
			if h.move != "" {
				dst := f.Resolve(dir, h.move)
				plan = append(plan, write{path: dst, data: content}, write{path: abs, remove: true})
			} else {
				plan = append(plan, write{path: abs, data: content})
			}
		}
	}
	res := &Result{Finals: map[string][]byte{}}
	for _, w := range plan {
		if _, seen := res.Finals[w.path]; !seen {
			res.Paths = append(res.Paths, w.path)
		}
		if w.remove {
			res.Finals[w.path] = nil
		} else {
			res.Finals[w.path] = w.data
		}
	}
	return res, nil
}
