// Package decode turns a fetched body into UTF-8 text and tells text from
// binary.
//
// The charset is chosen the way a browser would, with one difference made
// for robustness: when nothing declares it, the choice looks at the whole
// body, never at a prefix. In order:
//
//  1. A byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins over everything
//     and is removed.
//  2. The charset parameter of the Content-Type header, surrounding quotes
//     stripped.
//  3. For HTML only, a prescan of the whole page for <meta charset=...>,
//     then for <meta http-equiv="content-type" content="...charset=...">.
//  4. Otherwise a guess: strict UTF-8 over the entire body, then
//     windows-1252, then ISO-8859-1, taking the first whose decoded text
//     looks like text (see below). A body whose first kilobytes are ASCII
//     and whose later bytes are UTF-8 is therefore UTF-8, not
//     windows-1252. A non-UTF-8 guess is flagged as a fallback with a
//     warning; if no candidate looks like text the body is decoded as
//     UTF-8 with replacement characters and no flag.
//
// Labels follow the WHATWG Encoding Standard (golang.org/x/text's
// htmlindex), so "latin1" and "iso-8859-1" decode as windows-1252. A label
// the standard does not know, or one it maps to the "replacement"
// encoding, is reported as unsupported and the body decoded as lenient
// UTF-8.
//
// "Looks like text" means: over the first 2048 characters, control
// characters other than TAB, LF and CR make up under 2%, and printable
// characters (TAB, LF and CR included) over 85%.
package decode

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	xunicode "golang.org/x/text/encoding/unicode"
)

// Result is a body decoded to UTF-8.
type Result struct {
	Text     string // decoded, byte order mark removed; always valid UTF-8
	Charset  string // the label as declared, or the name of the guessed or forced encoding ("utf-8", "windows-1252", ...)
	Fallback bool   // the charset was guessed, or the declared one is unsupported
	Warning  string // "Guessed charset without declaration: NAME" or "Unsupported charset decoder: LABEL"; "" otherwise
}

// sniffWindow is how much of a body the text tests look at, in bytes for
// LooksText and in characters for the decoded-text test.
const sniffWindow = 2048

const (
	utf8Name        = "utf-8"
	guessedPrefix   = "Guessed charset without declaration: "
	unsupportedPref = "Unsupported charset decoder: "
)

// Decode decodes body to UTF-8. headerCharset is the charset parameter of
// the Content-Type header ("" if none); htmlLike enables the <meta>
// prescan.
func Decode(body []byte, headerCharset string, htmlLike bool) Result {
	label := strings.TrimSpace(strings.Trim(strings.TrimSpace(headerCharset), `"'`))

	if enc, name, n := bomEncoding(body); enc != nil {
		charset := name
		if label != "" {
			declared, err := htmlindex.Get(label)
			if err == nil && sameEncoding(declared, enc) {
				charset = label
			}
		}
		return Result{Text: decodeWith(enc, body[n:]), Charset: charset}
	}

	if label != "" {
		return declared(body, label, false)
	}
	if htmlLike {
		if label := metaCharset(body); label != "" {
			return declared(body, label, true)
		}
	}
	return guess(body)
}

// declared decodes body with a label taken from the header or from a
// <meta> element.
func declared(body []byte, label string, fromMeta bool) Result {
	enc, err := htmlindex.Get(label)
	if err != nil || enc == encoding.Replacement {
		return Result{Text: lenientUTF8(body), Charset: utf8Name, Fallback: true, Warning: unsupportedPref + label}
	}
	if fromMeta {
		// The prescan read the declaration as ASCII, so the page cannot
		// really be UTF-16; browsers read such a page as UTF-8, and
		// x-user-defined in a <meta> as windows-1252.
		if name, _ := htmlindex.Name(enc); strings.HasPrefix(name, "utf-16") {
			enc = xunicode.UTF8
		} else if name == "x-user-defined" {
			enc = charmap.Windows1252
		}
	}
	return Result{Text: decodeWith(enc, body), Charset: label}
}

// guess runs the fallback chain for a body nothing declares.
func guess(body []byte) Result {
	if utf8.Valid(body) {
		if looksDecoded(prefixRunes(string(body), sniffWindow)) {
			return Result{Text: string(body), Charset: utf8Name}
		}
	}
	for _, c := range []struct {
		name string
		enc  encoding.Encoding
	}{{"windows-1252", charmap.Windows1252}, {"iso-8859-1", charmap.ISO8859_1}} {
		// Test a prefix first: decoding all of a large body for a
		// candidate that is then refused would be wasted work. A single
		// byte charset maps each byte to one character, so sniffWindow
		// bytes give sniffWindow characters.
		head := body[:min(len(body), sniffWindow)]
		if !looksDecoded(decodeWith(c.enc, head)) {
			continue
		}
		return Result{Text: decodeWith(c.enc, body), Charset: c.name, Fallback: true, Warning: guessedPrefix + c.name}
	}
	return Result{Text: lenientUTF8(body), Charset: utf8Name}
}

// decodeWith decodes b with enc and makes sure the result is valid UTF-8
// (a decoder error cannot happen for the WHATWG decoders, which replace
// bad input, but a result is never allowed to be invalid).
func decodeWith(enc encoding.Encoding, b []byte) string {
	if name, _ := htmlindex.Name(enc); name == utf8Name {
		return lenientUTF8(b)
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		return lenientUTF8(b)
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

// lenientUTF8 reads b as UTF-8, replacing each invalid sequence with
// U+FFFD.
func lenientUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// bomEncoding returns the encoding a byte order mark at the start of b
// names, its WHATWG name and the length of the mark.
func bomEncoding(b []byte) (encoding.Encoding, string, int) {
	switch {
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return xunicode.UTF8, utf8Name, 3
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return xunicode.UTF16(xunicode.LittleEndian, xunicode.IgnoreBOM), "utf-16le", 2
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return xunicode.UTF16(xunicode.BigEndian, xunicode.IgnoreBOM), "utf-16be", 2
	}
	return nil, "", 0
}

// sameEncoding compares two encodings by their WHATWG names.
func sameEncoding(a, b encoding.Encoding) bool {
	na, errA := htmlindex.Name(a)
	nb, errB := htmlindex.Name(b)
	return errA == nil && errB == nil && na == nb
}

// metaCharset scans the whole of body for a <meta charset> declaration,
// then for an http-equiv Content-Type one, and returns the label ("" if
// none). Only the bytes of each <meta ...> tag are tokenized, so the work
// is linear in the body and small per tag.
func metaCharset(body []byte) string {
	var httpEquiv string
	for i := 0; i < len(body); {
		j := indexFold(body[i:], "<meta")
		if j < 0 {
			break
		}
		start := i + j
		i = start + len("<meta")
		if i < len(body) && !isTagSpace(body[i]) && body[i] != '/' && body[i] != '>' {
			continue // <metadata>, <meta-foo>
		}
		end := bytes.IndexByte(body[i:], '>')
		if end < 0 {
			end = len(body) - i
		} else {
			end++
		}
		tag := body[start : i+end]
		if indexFoldAny(tag, "charset") < 0 {
			continue // neither form can declare anything
		}
		charset, equiv := metaAttrs(tag)
		if charset != "" {
			return charset
		}
		if httpEquiv == "" && equiv != "" {
			httpEquiv = equiv
		}
	}
	return httpEquiv
}

// metaAttrs reads the attributes of one <meta ...> tag and returns its
// charset attribute and, for an http-equiv="content-type" tag, the charset
// in its content. Attribute syntax follows HTML: a name, then optionally
// "=" and a value that is double-quoted, single-quoted or bare; the first
// occurrence of a name counts.
func metaAttrs(tag []byte) (charset, equiv string) {
	var isContentType, seenCharset, seenEquiv, seenContent bool
	var content string
	i := len("<meta")
	for i < len(tag) {
		for i < len(tag) && (isTagSpace(tag[i]) || tag[i] == '/') {
			i++
		}
		if i >= len(tag) || tag[i] == '>' {
			break
		}
		nameStart := i
		for i < len(tag) && !isTagSpace(tag[i]) && tag[i] != '/' && tag[i] != '>' && tag[i] != '=' {
			i++
		}
		name := strings.ToLower(string(tag[nameStart:i]))
		for i < len(tag) && isTagSpace(tag[i]) {
			i++
		}
		var val string
		if i < len(tag) && tag[i] == '=' {
			i++
			for i < len(tag) && isTagSpace(tag[i]) {
				i++
			}
			if i < len(tag) && (tag[i] == '"' || tag[i] == '\'') {
				q := tag[i]
				i++
				end := bytes.IndexByte(tag[i:], q)
				if end < 0 {
					end = len(tag) - i
				}
				val = string(tag[i : i+end])
				i += end + 1
			} else {
				valStart := i
				for i < len(tag) && !isTagSpace(tag[i]) && tag[i] != '>' {
					i++
				}
				val = string(tag[valStart:i])
			}
		}
		switch {
		case name == "charset" && !seenCharset:
			seenCharset = true
			charset = strings.TrimSpace(val)
		case name == "http-equiv" && !seenEquiv:
			seenEquiv = true
			isContentType = strings.EqualFold(strings.TrimSpace(val), "content-type")
		case name == "content" && !seenContent:
			seenContent = true
			content = val
		}
	}
	if isContentType {
		equiv = contentCharset(content)
	}
	return charset, equiv
}

// contentCharset extracts the charset from a Content-Type value such as
// "text/html; charset=Shift_JIS" (quoted or not).
func contentCharset(content string) string {
	lower := strings.ToLower(content)
	k := strings.Index(lower, "charset")
	if k < 0 {
		return ""
	}
	rest := strings.TrimLeft(content[k+len("charset"):], " \t\r\n\f")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n\f")
	if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
		q := rest[0]
		rest = rest[1:]
		if e := strings.IndexByte(rest, q); e >= 0 {
			return strings.TrimSpace(rest[:e])
		}
		return ""
	}
	if e := strings.IndexAny(rest, "; \t\r\n\f"); e >= 0 {
		rest = rest[:e]
	}
	return rest
}

// indexFold is bytes.Index for an ASCII lowercase needle, ignoring the
// case of b.
func indexFold(b []byte, needle string) int {
	first := needle[0]
	for i := 0; i+len(needle) <= len(b); i++ {
		k := bytes.IndexByte(b[i:], '<')
		if k < 0 {
			return -1
		}
		i += k
		if i+len(needle) > len(b) {
			return -1
		}
		if b[i] == first && asciiEqualFold(b[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

// indexFoldAny is like indexFold for a needle that need not start with
// '<'.
func indexFoldAny(b []byte, needle string) int {
	for i := 0; i+len(needle) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(needle)], needle) {
			return i
		}
	}
	return -1
}

func asciiEqualFold(b []byte, lower string) bool {
	for i := 0; i < len(lower); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func isTagSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// looksDecoded reports whether s reads as text: over its first 2048
// characters, control characters other than TAB, LF and CR are under 2%
// and printable characters over 85%. U+FFFD (a byte the decoder could not
// map) counts as neither. The empty string looks decoded.
func looksDecoded(s string) bool {
	var total, control, printable int
	for _, r := range s {
		if total == sniffWindow {
			break
		}
		total++
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			printable++
		case r == utf8.RuneError:
		case unicode.IsControl(r):
			control++
		case unicode.IsPrint(r) || unicode.IsSpace(r):
			printable++
		}
	}
	if total == 0 {
		return true
	}
	return control*100 < 2*total && printable*100 > 85*total
}

// LooksText reports whether a body whose first bytes are sample is text
// rather than binary. Only the first 2048 bytes are looked at. It is text
// if a best-effort decode of them (strict UTF-8, then windows-1252, then
// ISO-8859-1) looks decoded, or if it has no NUL byte and, over the raw
// bytes, under 2% are control bytes and over 85% printable ASCII or
// whitespace. An empty sample is text.
func LooksText(sample []byte) bool {
	if len(sample) > sniffWindow {
		sample = sample[:sniffWindow]
	}
	if len(sample) == 0 {
		return true
	}
	if s, ok := strictUTF8Prefix(sample); ok && looksDecoded(s) {
		return true
	}
	if looksDecoded(decodeWith(charmap.Windows1252, sample)) || looksDecoded(decodeWith(charmap.ISO8859_1, sample)) {
		return true
	}
	if bytes.IndexByte(sample, 0) >= 0 {
		return false
	}
	var control, printable int
	for _, c := range sample {
		switch {
		case c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			printable++
		case c < 0x20 || c == 0x7F:
			control++
		case c < 0x7F:
			printable++
		}
	}
	return control*100 < 2*len(sample) && printable*100 > 85*len(sample)
}

// strictUTF8Prefix reports whether sample is valid UTF-8, allowing the
// sniff window to have cut one multi-byte character at its end.
func strictUTF8Prefix(sample []byte) (string, bool) {
	if utf8.Valid(sample) {
		return string(sample), true
	}
	for cut := 1; cut <= utf8.UTFMax-1 && cut < len(sample); cut++ {
		head, tail := sample[:len(sample)-cut], sample[len(sample)-cut:]
		if utf8.Valid(head) && utf8.RuneStart(tail[0]) && !utf8.FullRune(tail) {
			return string(head), true
		}
	}
	return "", false
}

// StartsLikeHTML reports whether s, after leading whitespace and a byte
// order mark, opens with <!doctype html, <html, <head or <body (any case),
// each followed by the end of the tag or whitespace, so that a plain text
// file starting with "<header>" is not taken for a page.
func StartsLikeHTML(s string) bool {
	s = strings.TrimLeft(s, "\uFEFF \t\r\n\f")
	s = strings.TrimPrefix(s, "\uFEFF")
	s = strings.TrimLeft(s, " \t\r\n\f")
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if len(s) < len(p) || !strings.EqualFold(s[:len(p)], p) {
			continue
		}
		if len(s) == len(p) {
			return true
		}
		switch s[len(p)] {
		case '>', '/', ' ', '\t', '\r', '\n', '\f':
			return true
		}
	}
	return false
}

// prefixRunes returns the first n characters of s.
func prefixRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
