package extract

import (
	"bytes"
	"net/url"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

// The converter entity-encodes "<" and ">" in every text node, so prose
// such as "List<String>" would read "List&lt;String&gt;". Before that
// happens the two characters are swapped for Unicode noncharacters (which
// the standard reserves for internal use, so no page means them), and
// swapped back at the very end. Code spans and blocks are not text nodes
// to the converter and keep their characters anyway.
const (
	ltStandIn = "\uFDD0"
	gtStandIn = "\uFDD1"
)

var hideAngles = strings.NewReplacer("<", ltStandIn, ">", gtStandIn)

// showAnglesInPlace turns the stand-ins in md back into "<" and ">". Each
// stand-in is longer than its character, so md is rewritten in place:
// the converted document is a megabyte for a large page, and copying it
// (twice, through a string) cost more than the rest of this step.
func showAnglesInPlace(md []byte) []byte {
	// Both stand-ins are three bytes that differ only in the last.
	prefix := []byte(ltStandIn[:2])
	i := bytes.Index(md, prefix)
	if i < 0 {
		return md
	}
	out := md[:i]
	for i < len(md) {
		j := bytes.Index(md[i:], prefix)
		if j < 0 {
			break
		}
		// copy within md: out never overtakes i.
		out = append(out, md[i:i+j]...)
		i += j
		switch {
		case i+3 <= len(md) && md[i+2] == ltStandIn[2]:
			out = append(out, '<')
			i += 3
		case i+3 <= len(md) && md[i+2] == gtStandIn[2]:
			out = append(out, '>')
			i += 3
		default:
			out = append(out, md[i])
			i++
		}
	}
	return append(out, md[i:]...)
}

// newConverter returns an HTML to markdown converter: ATX headings, "-"
// bullets, fenced code that keeps its language-* class, GFM tables (a
// first row without <th> becomes the header; cells keep line breaks as
// <br />), and "<", ">" left as they are in prose. It is built per call:
// the converter holds state and is cheap to make.
func newConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithHeadingStyle(commonmark.HeadingStyleATX),
			commonmark.WithBulletListMarker("-"),
			commonmark.WithCodeBlockFence("```"),
		),
		table.NewTablePlugin(
			table.WithHeaderPromotion(true),
			table.WithSkipEmptyRows(true),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
			table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
		),
	))
	conv.Register.TextTransformer(func(_ converter.Context, content string) string {
		return hideAngles.Replace(content)
	}, converter.PriorityEarly)
	conv.Register.PostRenderer(func(_ converter.Context, result []byte) []byte {
		return showAnglesInPlace(result)
	}, converter.PriorityLate)
	return conv
}

// toMarkdown converts n (which it changes: the converter trims and
// collapses the tree in place) to cleaned markdown, with relative links
// and images made absolute against base.
func toMarkdown(n *html.Node, base *url.URL) (string, error) {
	markCodeLanguages(n)
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.String()))
	}
	md, err := newConverter().ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	return CleanMarkdown(string(md)), nil
}

// markCodeLanguages gives a fence its language where the page states it
// some other way than a language-* class: rustdoc marks Rust code with
// class "rust" on the <pre>.
func markCodeLanguages(root *html.Node) {
	walk(root, func(n *html.Node) bool {
		if !isElement(n, "pre") {
			return true
		}
		if hasClass(n, "rust") && !hasLanguageClass(n) {
			setAttr(n, "class", strings.TrimSpace(attr(n, "class")+" language-rust"))
		}
		return false
	})
}

func hasLanguageClass(pre *html.Node) bool {
	found := false
	walk(pre, func(n *html.Node) bool {
		for _, c := range strings.Fields(attr(n, "class")) {
			if strings.HasPrefix(c, "language-") || strings.HasPrefix(c, "lang-") {
				found = true
			}
		}
		return !found
	})
	return found
}

// fence tracks fenced code blocks line by line, so that the markdown
// rules apply only outside them.
type fence struct {
	char byte // '`' or '~' while inside a block, 0 outside
	n    int  // length of the opening run
}

// line reports whether line is code (inside a block, or a fence line
// itself) and updates the state.
func (f *fence) line(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return f.char != 0
	}
	if f.char == 0 {
		if c, n := fenceRun(t); n >= 3 && (c == '~' || !strings.Contains(t[n:], "`")) {
			f.char, f.n = c, n
			return true
		}
		return false
	}
	if c, n := fenceRun(t); c == f.char && n >= f.n && strings.TrimSpace(t[n:]) == "" {
		f.char = 0
	}
	return true
}

func fenceRun(t string) (byte, int) {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return 0, 0
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	return t[0], n
}

// CleanMarkdown tidies converted markdown. Outside fenced code blocks:
//
//   - a line that is only images (or linked images), or exactly "Image",
//     becomes "Image omitted";
//   - a heading written as ['Foo', 'Foo'] or 'Foo' loses the quotes and
//     brackets;
//   - at the end of a heading, a symbol-only link ("[¶](...)", "[#](...)")
//     and a bare "(#anchor)" are removed; elsewhere "(#1234)" stays, so
//     "Fix crash (#1234)" keeps its reference;
//   - runs of blank lines become one.
//
// The result is trimmed. Code blocks are kept as they are.
func CleanMarkdown(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	var b strings.Builder
	b.Grow(len(md))
	var f fence
	blank := 0
	for line := range strings.Lines(md) {
		line = strings.TrimSuffix(line, "\n")
		code := f.line(line)
		if !code {
			if strings.TrimSpace(line) == "" {
				blank++
				continue
			}
			line = cleanLine(line)
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
			if blank > 0 {
				b.WriteByte('\n')
			}
		}
		blank = 0
		b.WriteString(line)
	}
	return strings.TrimSpace(b.String())
}

// cleanLine applies the line rules of CleanMarkdown to one line that is
// not code and not blank.
func cleanLine(line string) string {
	t := strings.TrimSpace(line)
	if t == "Image" || onlyImages(t) {
		return "Image omitted"
	}
	level, text, ok := atxHeading(line)
	if !ok {
		return line
	}
	text = unquoteHeading(text)
	for {
		t := strings.TrimSpace(trimTrailingAnchor(text))
		if t == text {
			break
		}
		text = t
	}
	if text == "" {
		return strings.Repeat("#", level)
	}
	return strings.Repeat("#", level) + " " + text
}

// atxHeading splits an ATX heading line into its level and its text
// (closing "#" run removed).
func atxHeading(line string) (level int, text string, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, "", false
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	text = strings.TrimSpace(t[level:])
	// A closing sequence is a run of '#' preceded by a space (or the
	// whole text).
	if c := strings.TrimRight(text, "#"); c != text && (c == "" || c[len(c)-1] == ' ' || c[len(c)-1] == '\t') {
		text = strings.TrimSpace(c)
	}
	return level, text, true
}

// unquoteHeading turns ['Foo', 'Foo'] and 'Foo' into Foo, artefacts of
// pages that print a list's representation as a heading.
func unquoteHeading(s string) string {
	t := strings.TrimPrefix(s, "[")
	t = strings.TrimSuffix(t, "]")
	if len(t) >= 2 && t[0] == '\'' && t[len(t)-1] == '\'' && !strings.Contains(t[1:len(t)-1], "'") {
		return t[1 : len(t)-1]
	}
	return s
}

// trimTrailingAnchor removes a symbol-only link or a "(#anchor)" at the
// end of heading text.
func trimTrailingAnchor(s string) string {
	if !strings.HasSuffix(s, ")") {
		return s
	}
	open := matchingParen(s)
	if open < 0 {
		return s
	}
	target := s[open+1 : len(s)-1]
	if open > 0 && s[open-1] == ']' {
		// [text](target) or [text](target "title")
		lb := strings.LastIndexByte(s[:open-1], '[')
		if lb < 0 || !symbolsOnly(unescapeMarkdown(s[lb+1:open-1])) {
			return s
		}
		if lb > 0 && s[lb-1] == '!' {
			return s // an image, not a marker
		}
		return s[:lb]
	}
	if strings.HasPrefix(target, "#") && !strings.ContainsAny(target, " \t") && len(target) > 1 {
		return s[:open]
	}
	return s
}

// matchingParen returns the index of the '(' that the final ')' of s
// closes, or -1.
func matchingParen(s string) int {
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func unescapeMarkdown(s string) string {
	return strings.ReplaceAll(s, `\`, "")
}

// onlyImages reports whether t is one or more markdown images, each
// possibly wrapped in a link, separated by white space.
func onlyImages(t string) bool {
	if !strings.HasPrefix(t, "![") && !strings.HasPrefix(t, "[![") {
		return false
	}
	for t != "" {
		rest, ok := skipImage(t)
		if !ok {
			return false
		}
		t = strings.TrimLeft(rest, " \t")
	}
	return true
}

// skipImage consumes one image or linked image at the start of t.
func skipImage(t string) (string, bool) {
	if strings.HasPrefix(t, "[![") {
		rest, ok := skipImage(t[1:])
		if !ok || !strings.HasPrefix(rest, "]") {
			return "", false
		}
		return skipDestination(rest[1:])
	}
	if !strings.HasPrefix(t, "![") {
		return "", false
	}
	i := 2
	for ; i < len(t) && t[i] != ']'; i++ {
		if t[i] == '\\' {
			i++
		}
	}
	if i >= len(t) {
		return "", false
	}
	return skipDestination(t[i+1:])
}

// skipDestination consumes "(...)" with balanced parentheses.
func skipDestination(t string) (string, bool) {
	if !strings.HasPrefix(t, "(") {
		return "", false
	}
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return t[i+1:], true
			}
		}
	}
	return "", false
}

// MarkdownHeadings returns the text of the ATX headings ("#" lines) of md
// outside fenced code blocks, cleaned like page headings, empty ones
// dropped, at most 12.
func MarkdownHeadings(md string) []string {
	var out []string
	var f fence
	for line := range strings.Lines(md) {
		if len(out) == maxHeadings {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		if f.line(line) {
			continue
		}
		if _, text, ok := atxHeading(line); ok {
			if h := cleanHeading(trimTrailingAnchor(unquoteHeading(text))); h != "" {
				out = append(out, h)
			}
		}
	}
	return out
}

// FrontmatterURL returns the url: field of a front matter block that
// opens s (a first line "---", closed by a line "---" or "..."), with
// surrounding quotes removed, or "" if there is none or the block is never
// closed.
func FrontmatterURL(s string) string {
	s = strings.TrimPrefix(s, "\uFEFF")
	first := true
	found := ""
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\r\n")
		if first {
			if strings.TrimRight(line, " \t") != "---" {
				return ""
			}
			first = false
			continue
		}
		if t := strings.TrimRight(line, " \t"); t == "---" || t == "..." {
			return found
		}
		key, val, ok := strings.Cut(line, ":")
		if !ok || found != "" || strings.TrimRight(key, " \t") != "url" {
			continue // only a top-level url: key counts, the first one
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		found = strings.TrimSpace(val)
	}
	return "" // never closed: not front matter
}
