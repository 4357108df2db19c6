package search

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ripgrep's --json output is one JSON object per line: "begin" and "end"
// around each file, a "match" per matching line (path, line text,
// line number, submatches), and a closing "summary". A matching line can
// be huge (a minified bundle is one line), so records are read through a
// bound: past maxRecord bytes only the head of a record is kept, which
// holds its type, its path and the start of the line, and the line number
// is picked out of the bytes that stream past.
const maxRecord = 64 << 10

// lineNumberKey introduces a match's line number. The sequence cannot occur
// inside a JSON string (a quote there is escaped), so its first occurrence
// in a record is the field itself.
const lineNumberKey = `"line_number":`

// rgRecord is one line of rg's output, whole or cut.
type rgRecord struct {
	head []byte // the record, or its first maxRecord bytes when cut
	cut  bool
	// line is the line number found past the head of a cut record, 0 if
	// none was.
	line int
}

// recordReader splits rg's output into records without ever holding more
// than maxRecord bytes of one.
type recordReader struct {
	r    *bufio.Reader
	head []byte
	scan []byte // the bytes past the head still being looked at for the line number
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next non-empty record, or io.EOF. A last record without
// a newline is returned too. The record's bytes are valid until the next
// call.
func (rr *recordReader) next() (rgRecord, error) {
	for {
		rec, err := rr.read()
		if len(rec.head) > 0 {
			return rec, nil
		}
		if err != nil {
			return rgRecord{}, err
		}
	}
}

func (rr *recordReader) read() (rgRecord, error) {
	chunk, err := rr.r.ReadSlice('\n')
	if err == nil {
		// The whole record is in the reader's buffer (which is maxRecord
		// long): use it where it lies instead of copying it.
		return rgRecord{head: trimLineEnds(chunk)}, nil
	}
	rr.head = rr.head[:0]
	rec := rgRecord{}
	searching := false // looking for the line number past the head
	for first := true; ; first = false {
		if !first {
			chunk, err = rr.r.ReadSlice('\n')
		}
		if room := maxRecord - len(rr.head); room > 0 {
			n := min(room, len(chunk))
			rr.head = append(rr.head, chunk[:n]...)
			chunk = chunk[n:]
		}
		if len(chunk) > 0 {
			if !rec.cut {
				rec.cut = true
				searching = bytes.Index(rr.head, []byte(lineNumberKey)) < 0
				// The key may straddle the end of the head.
				rr.scan = append(rr.scan[:0], rr.head[max(0, len(rr.head)-len(lineNumberKey)):]...)
			}
			if searching {
				rr.scan = append(rr.scan, chunk...)
				if n, ok := numberAfter(rr.scan, lineNumberKey); ok {
					rec.line, searching = n, false
				} else if i := bytes.Index(rr.scan, []byte(lineNumberKey)); i < 0 {
					rr.scan = append(rr.scan[:0], rr.scan[max(0, len(rr.scan)-len(lineNumberKey)):]...)
				} else {
					rr.scan = append(rr.scan[:0], rr.scan[i:]...) // the key, its digits still coming
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		rec.head = trimLineEnds(rr.head)
		if err == io.EOF && len(rec.head) > 0 {
			err = nil
		}
		return rec, err
	}
}

// trimLineEnds is bytes.TrimRight(b, "\r\n") without building the cut set
// for every record.
func trimLineEnds(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// numberAfter parses the decimal number after the first key in b; ok is
// false when the key is not there or its digits may still continue.
func numberAfter(b []byte, key string) (int, bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0, false
	}
	digits := b[i+len(key):]
	n, k := 0, 0
	for k < len(digits) && digits[k] >= '0' && digits[k] <= '9' {
		if n > 1<<40 {
			return 0, false
		}
		n = n*10 + int(digits[k]-'0')
		k++
	}
	if k == 0 || k == len(digits) {
		return 0, false
	}
	return n, true
}

// rgEvent is what slim uses of one record.
type rgEvent struct {
	Type string // "begin", "match", "end", "summary", "context", ...
	Path string // the file, for begin, match, end and context
	Line int    // the 1-based line number of a match
	// Text is the matching line with its terminator removed, cut to
	// maxPreview characters (then "..." is appended).
	Text string
}

// maxPreview is the most characters of a matching line shown.
const maxPreview = 2000

var errBadRecord = errors.New("not a ripgrep JSON record")

// recordType returns the type of a record from its first bytes, without
// decoding the rest. rg always writes "type" first.
func recordType(head []byte) string {
	const prefix = `{"type":"`
	if !bytes.HasPrefix(head, []byte(prefix)) {
		return ""
	}
	rest := head[len(prefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}

// parseRecord decodes a record. It reads the fields it needs straight
// from the bytes rather than decoding the whole object: rg writes "type"
// first, then "data" with "path" before "lines" and "line_number", and
// since a quote inside a JSON string is always escaped, the first
// `"path":`, `"lines":` and `"line_number":` in a record are the fields
// themselves. A cut record is read the same way, its line number from
// the bytes past its head.
func parseRecord(rec rgRecord) (rgEvent, error) {
	typ := recordType(rec.head)
	if typ == "" {
		return rgEvent{}, errBadRecord
	}
	ev := rgEvent{Type: typ}
	if typ != "begin" && typ != "match" && typ != "end" && typ != "context" {
		return ev, nil // summary and the like: nothing slim uses
	}
	var ok, complete bool
	if ev.Path, complete, ok = textField(rec.head, `"path":`, maxRecord); !ok || !complete {
		return rgEvent{}, errBadRecord
	}
	if typ != "match" {
		return ev, nil
	}
	line, ok := numberAfter(rec.head, lineNumberKey)
	if !ok {
		line = rec.line
	}
	if line <= 0 {
		return rgEvent{}, errBadRecord
	}
	ev.Line = line
	// Two characters more than are shown, so that a line of exactly
	// maxPreview characters and its CRLF still ends inside the limit.
	text, complete, ok := textField(rec.head, `"lines":`, maxPreview+2)
	if !ok {
		return rgEvent{}, errBadRecord
	}
	if complete {
		ev.Text = preview(text)
	} else {
		ev.Text = cutPreview(text)
	}
	return ev, nil
}

// preview removes a line's terminator, shows invalid UTF-8 as U+FFFD
// (ripgrep sends such lines as raw bytes) and cuts the line to maxPreview
// characters.
func preview(s string) string {
	s = trimEOL(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if utf8.RuneCountInString(s) <= maxPreview {
		return s
	}
	return cutPreview(s)
}

// cutPreview returns the first maxPreview characters of s and "...".
func cutPreview(s string) string { return cutRunes(s, maxPreview) + "..." }

func trimEOL(s string) string {
	if len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
		if len(s) > 0 && s[len(s)-1] == '\r' {
			s = s[:len(s)-1]
		}
	}
	return s
}

// textField finds key (for example `"lines":`) followed by an rg text
// object in b and decodes its value, at most max characters of it.
// complete is false when the value was longer than max or ran past the end
// of b. ok is false when the key is not there.
func textField(b []byte, key string, max int) (s string, complete, ok bool) {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return "", false, false
	}
	rest := b[i+len(key):]
	switch {
	case bytes.HasPrefix(rest, []byte(`{"text":"`)):
		s, complete = jsonStringPrefix(rest[len(`{"text":"`):], max)
		return s, complete, true
	case bytes.HasPrefix(rest, []byte(`{"bytes":"`)):
		enc := rest[len(`{"bytes":"`):]
		end := bytes.IndexByte(enc, '"')
		complete = end >= 0
		if end < 0 {
			end = len(enc) / 4 * 4
		}
		dec, err := base64.StdEncoding.DecodeString(string(enc[:end]))
		if err != nil {
			return "", false, true
		}
		s = string(dec)
		if utf8.RuneCountInString(s) > max {
			return cutRunes(s, max), false, true
		}
		return s, complete, true
	}
	return "", false, false
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	c := 0
	for i := range s {
		if c == n {
			return s[:i]
		}
		c++
	}
	return s
}

// jsonStringPrefix decodes the body of a JSON string (after its opening
// quote) up to its closing quote, the end of b, or max characters,
// whichever comes first. complete reports that the closing quote was
// reached.
func jsonStringPrefix(b []byte, max int) (string, bool) {
	// Most lines are ASCII without escapes: count their run at once.
	i := 0
	for i < len(b) && i < max {
		c := b[i]
		if c == '"' {
			return string(b[:i]), true
		}
		if c == '\\' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	out := append(make([]byte, 0, i+64), b[:i]...)
	n := i
	for i < len(b) {
		c := b[i]
		if c == '"' {
			return string(out), true
		}
		if n >= max {
			return string(out), false
		}
		switch {
		case c == '\\':
			if i+1 >= len(b) {
				return string(out), false
			}
			e := b[i+1]
			i += 2
			switch e {
			case 'n':
				out = append(out, '\n')
			case 't':
				out = append(out, '\t')
			case 'r':
				out = append(out, '\r')
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'u':
				r, size := decodeU(b[i:])
				if size == 0 {
					return string(out), false
				}
				i += size
				out = utf8.AppendRune(out, r)
			default: // '"', '\\', '/'
				out = append(out, e)
			}
			n++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 && !utf8.FullRune(b[i:]) {
				return string(out), false
			}
			out = append(out, b[i:i+size]...)
			i += size
			n++
		}
	}
	return string(out), false
}

// decodeU decodes the four hex digits after `\u` (and a following low
// surrogate escape), returning the rune and the bytes used; 0 bytes when
// they are incomplete.
func decodeU(b []byte) (rune, int) {
	hex := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(b[:4]), 16, 32)
		return rune(v), err == nil
	}
	r, ok := hex(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if len(b) >= 10 && b[4] == '\\' && b[5] == 'u' {
			if r2, ok := hex(b[6:]); ok {
				if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
					return d, 10
				}
			}
		}
		return utf8.RuneError, 4
	}
	return r, 4
}
