package patch

import (
	"strings"

	"github.com/slimgate/slim/rescue/internal/jsstr"
)

// This file is the parser: the strict grammar of the Codex format, with the
// validation messages of the host's own apply_patch tool, plus harmless
// variants that only a patch written by hand or pasted from a chat has: CR
// line ends, a heredoc, an "apply_patch <<'EOF'" line or a code fence around
// the patch, whitespace around markers and headers, body lines before the
// first @@ of an Update, and empty lines inside a chunk. Each accepted
// variant is recorded as a Repair, and a patch that needed one is handed on
// rewritten.

const invalidFormat = "Invalid patch format: "

// heredocDelim recognises a heredoc opening line, `[cat ]<<[-]['"]WORD['"]`,
// and returns its delimiter. With cmd, the line must start with the
// apply_patch command instead of cat (optionally after `cd DIR &&`).
func heredocDelim(line string, cmd bool) (string, bool) {
	s := strings.TrimSpace(line)
	if cmd {
		if strings.HasPrefix(s, "cd ") {
			i := strings.Index(s, "&&")
			if i < 0 {
				return "", false
			}
			if dir := strings.TrimSpace(s[3:i]); dir == "" || strings.ContainsAny(dir, " \t") {
				return "", false
			}
			s = strings.TrimSpace(s[i+2:])
		}
		switch {
		case strings.HasPrefix(s, "apply_patch"):
			s = s[len("apply_patch"):]
		case strings.HasPrefix(s, "applypatch"):
			s = s[len("applypatch"):]
		default:
			return "", false
		}
		s = strings.TrimLeft(s, " \t")
	} else if strings.HasPrefix(s, "cat") && len(s) > 3 && (s[3] == ' ' || s[3] == '\t') {
		s = strings.TrimLeft(s[3:], " \t")
	}
	if !strings.HasPrefix(s, "<<") {
		return "", false
	}
	s = strings.TrimPrefix(s[2:], "-")
	s = strings.TrimLeft(s, " \t")
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		s = s[1:]
	}
	if s != "" && (s[len(s)-1] == '\'' || s[len(s)-1] == '"') {
		s = s[:len(s)-1]
	}
	if s == "" {
		return "", false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", false
		}
	}
	return s, true
}

type pline struct {
	text string
	num  int // 1-based line in the input
}

// SyntaxError is every error Parse returns: the patch is malformed.
// Message is the whole text the model reads, starting with
// ValidationPrefix.
type SyntaxError struct {
	Message string
}

func (e *SyntaxError) Error() string { return e.Message }

func validationErr(format string) error {
	return &SyntaxError{Message: ValidationPrefix + format}
}

func showLine(s string) string {
	if s == "" {
		return "<empty>"
	}
	return s
}

func isBlank(s string) bool { return jsstr.Trim(s) == "" }

// Parse parses patch text. Every failure is a *SyntaxError.
func Parse(text []byte) (*Patch, error) {
	p := &Patch{}
	raw := string(text)
	if strings.ContainsRune(raw, '\r') {
		before := raw[:strings.IndexByte(raw, '\r')]
		p.Repairs = append(p.Repairs, Repair{Kind: RepairPatchEOL, Line: strings.Count(before, "\n") + 1})
		raw = strings.ReplaceAll(raw, "\r\n", "\n")
		raw = strings.ReplaceAll(raw, "\r", "\n")
	}
	split := strings.Split(raw, "\n")
	lines := make([]pline, len(split))
	for i, s := range split {
		lines[i] = pline{s, i + 1}
	}
	lo, hi := 0, len(lines)-1
	trim := func() {
		for lo <= hi && isBlank(lines[lo].text) {
			lo++
		}
		for hi >= lo && isBlank(lines[hi].text) {
			hi--
		}
	}
	trim()
	if lo > hi {
		return nil, validationErr(invalidFormat + "missing Begin/End markers")
	}
	firstNum := lines[lo].num

	// Wrappers: code fences, heredocs and an "apply_patch <<'EOF'" line, in
	// any nesting, each only when it encloses the whole text.
	for changed := true; changed && lo < hi; {
		changed = false
		first, last := jsstr.Trim(lines[lo].text), jsstr.Trim(lines[hi].text)
		switch {
		case strings.HasPrefix(first, "```") || strings.HasPrefix(first, "~~~"):
			p.Repairs = append(p.Repairs, Repair{Kind: RepairCodeFence, Line: lines[lo].num})
			lo, changed = lo+1, true
			if last == first[:3] {
				hi--
			}
		case last == "```" || last == "~~~":
			p.Repairs = append(p.Repairs, Repair{Kind: RepairCodeFence, Line: lines[hi].num})
			hi, changed = hi-1, true
		case isHeredoc(first):
			if delim, _ := heredocDelim(first, false); last == delim {
				p.Repairs = append(p.Repairs, Repair{Kind: RepairHeredoc, Line: lines[lo].num})
				lo, hi, changed = lo+1, hi-1, true
			}
		case isApplyPatch(first):
			delim, _ := heredocDelim(first, true)
			p.Repairs = append(p.Repairs, Repair{Kind: RepairApplyPatchPrefix, Line: lines[lo].num})
			lo, changed = lo+1, true
			if last == delim {
				hi--
			}
		}
		trim()
	}

	begin, end := -1, -1
	for i := lo; i <= hi; i++ {
		if jsstr.Trim(lines[i].text) == BeginMarker {
			begin = i
			break
		}
	}
	if begin >= 0 {
		for i := begin + 1; i <= hi; i++ {
			if jsstr.TrimEnd(lines[i].text) == EndMarker {
				end = i
				break
			}
		}
		if end < 0 && hi > begin && jsstr.Trim(lines[hi].text) == EndMarker {
			end = hi
			p.Repairs = append(p.Repairs, Repair{Kind: RepairPaddedMarker, Line: lines[hi].num})
		}
	}
	if begin < 0 || end < 0 {
		return nil, validationErr(invalidFormat + "missing Begin/End markers")
	}
	for i := lo; i < begin; i++ {
		if !isBlank(lines[i].text) {
			return nil, validationErr(invalidFormat + "unexpected line before Begin Patch: " + showLine(lines[i].text))
		}
	}
	for i := end + 1; i <= hi; i++ {
		if !isBlank(lines[i].text) {
			return nil, validationErr(invalidFormat + "unexpected line after End Patch: " + showLine(lines[i].text))
		}
	}
	if b := lines[begin]; b.num != firstNum && b.text != jsstr.TrimStart(b.text) {
		p.Repairs = append(p.Repairs, Repair{Kind: RepairPaddedMarker, Line: b.num})
	}

	body := lines[begin+1 : end]
	for i := 0; i < len(body); {
		l := body[i]
		if isBlank(l.text) {
			i++
			continue
		}
		kind, path, ok := parseHeader(l.text)
		if !ok {
			return nil, validationErr(invalidFormat + "unexpected line between hunks: " + showLine(l.text))
		}
		if l.text != jsstr.TrimStart(l.text) {
			p.Repairs = append(p.Repairs, Repair{Kind: RepairPaddedHeader, Line: l.num})
		}
		h := &Hunk{Kind: kind, Path: path, Line: l.num}
		i++
		switch kind {
		case HunkDelete:
		case HunkAdd:
			for i < len(body) {
				t := body[i].text
				if strings.HasPrefix(t, "+") {
					h.Add = append(h.Add, t[1:])
					i++
					continue
				}
				if isBlank(t) {
					// A blank line ends the body unless more content follows.
					j := i
					for j < len(body) && isBlank(body[j].text) {
						j++
					}
					if j < len(body) && strings.HasPrefix(body[j].text, "+") {
						return nil, validationErr(invalidFormat + "unexpected line in Add File body: " + showLine(t))
					}
					break
				}
				if strings.HasPrefix(jsstr.TrimStart(t), "***") {
					break
				}
				return nil, validationErr(invalidFormat + "unexpected line in Add File body: " + showLine(t))
			}
		case HunkUpdate:
			if i < len(body) {
				t := jsstr.TrimStart(body[i].text)
				if strings.HasPrefix(t, MoveHeader) {
					mv := jsstr.Trim(t[len(MoveHeader):])
					if mv == "" {
						return nil, validationErr(invalidFormat + "unexpected line between hunks: " + showLine(l.text))
					}
					if t != body[i].text {
						p.Repairs = append(p.Repairs, Repair{Kind: RepairPaddedHeader, Line: body[i].num})
					}
					h.Move = mv
					i++
				}
			}
			n, err := parseUpdateBody(p, h, body[i:])
			if err != nil {
				return nil, err
			}
			i += n
		}
		p.Hunks = append(p.Hunks, h)
	}
	if len(p.Hunks) == 0 {
		if end == begin+1 {
			return nil, validationErr("empty patch")
		}
		return nil, validationErr("no hunks found")
	}
	return p, nil
}

// parseHeader recognises a hunk header, padded or not.
func parseHeader(line string) (HunkKind, string, bool) {
	t := jsstr.TrimStart(line)
	for _, h := range []struct {
		prefix string
		kind   HunkKind
	}{{AddHeader, HunkAdd}, {DeleteHeader, HunkDelete}, {UpdateHeader, HunkUpdate}} {
		if strings.HasPrefix(t, h.prefix) {
			path := jsstr.Trim(t[len(h.prefix):])
			if path == "" {
				return 0, "", false
			}
			return h.kind, path, true
		}
	}
	return 0, "", false
}

// parseUpdateBody parses the chunks of an Update hunk and returns how many
// lines it consumed.
func parseUpdateBody(p *Patch, h *Hunk, body []pline) (int, error) {
	var cur *Chunk
	i := 0
loop:
	for ; i < len(body); i++ {
		l := body[i]
		t := l.text
		switch {
		case strings.HasPrefix(t, "***"):
			if jsstr.TrimEnd(t) != EOFMarker || cur == nil {
				break loop
			}
			if t != EOFMarker {
				p.Repairs = append(p.Repairs, Repair{Kind: RepairPaddedMarker, Line: l.num})
			}
			cur.EOF = true
			cur = nil
		case strings.HasPrefix(t, "@@"):
			if cur == nil || len(cur.Lines) > 0 || cur.EOF {
				cur = &Chunk{Line: l.num}
				h.Chunks = append(h.Chunks, cur)
			}
			ctx := strings.TrimPrefix(t[2:], " ")
			if jsstr.Trim(ctx) != "" {
				cur.Contexts = append(cur.Contexts, Context{Text: ctx, Line: l.num})
			}
		case t == "" || t[0] == ' ' || t[0] == '-' || t[0] == '+':
			if cur == nil {
				if t == "" {
					continue // blank lines between chunks
				}
				p.Repairs = append(p.Repairs, Repair{Kind: RepairMissingChunkHead, Line: l.num})
				cur = &Chunk{Line: l.num}
				h.Chunks = append(h.Chunks, cur)
			}
			if t == "" {
				cur.Lines = append(cur.Lines, ChunkLine{Op: OpContext, Text: "", Line: l.num})
				continue
			}
			cur.Lines = append(cur.Lines, ChunkLine{Op: Op(t[0]), Text: t[1:], Line: l.num})
		default:
			if len(h.Chunks) == 0 {
				return 0, validationErr(invalidFormat + "unexpected line in update body: " + showLine(t))
			}
			return 0, validationErr(invalidFormat + "unexpected line in patch chunk: " + showLine(t))
		}
	}
	// Blank lines at the end of the body separate hunks; they are not
	// context. Blank lines inside a chunk are empty context lines.
	if cur != nil {
		for len(cur.Lines) > 0 {
			last := cur.Lines[len(cur.Lines)-1]
			if last.Text != "" || last.Op != OpContext || lineText(body, last.Line) != "" {
				break
			}
			cur.Lines = cur.Lines[:len(cur.Lines)-1]
		}
	}
	for _, c := range h.Chunks {
		for _, l := range c.Lines {
			if l.Op == OpContext && l.Text == "" && lineText(body, l.Line) == "" {
				p.Repairs = append(p.Repairs, Repair{Kind: RepairBlankContextLine, Line: l.Line})
			}
		}
	}
	if len(h.Chunks) == 0 {
		return 0, validationErr(invalidFormat + "Update File is missing @@ chunk body: " + h.Path)
	}
	return i, nil
}

// lineText returns the raw text of input line num within body ("-" when
// it is not there, which never equals "").
func lineText(body []pline, num int) string {
	if len(body) == 0 {
		return "-"
	}
	k := num - body[0].num
	if k < 0 || k >= len(body) {
		return "-"
	}
	return body[k].text
}

func isHeredoc(line string) bool    { _, ok := heredocDelim(line, false); return ok }
func isApplyPatch(line string) bool { _, ok := heredocDelim(line, true); return ok }
