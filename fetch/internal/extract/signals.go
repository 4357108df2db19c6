package extract

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// The quality signals a page can carry. They warn the reader of the
// output that the content may not be what the page shows a person.
const (
	// SignalVeryShort: fewer than 60 words (and more than none).
	SignalVeryShort = "very_short_content"
	// SignalPaywall: the text mentions a subscription or login wall.
	SignalPaywall = "possible_paywall"
	// SignalBoilerplate: a whole page (no main-content extraction) whose
	// HTML is at least ten times its text, with under 1200 words.
	SignalBoilerplate = "high_boilerplate_ratio"
	// SignalEmpty: no words at all.
	SignalEmpty = "empty_content"
	// SignalJSRendered: the page's body has almost no text and either
	// many scripts or a <noscript> asking to enable JavaScript, so its
	// content is probably built in the browser.
	SignalJSRendered = "likely_js_rendered"
	// SignalSimplified: the page was too large (in tags or elements) for
	// main-content extraction or for the markdown converter, and part or
	// all of the output is its plain text.
	SignalSimplified = "large_page_simplified"
)

// paywallPhrases are matched case-insensitively against text and
// markdown.
var paywallPhrases = []string{
	"subscribe to continue",
	"subscription required",
	"sign in to continue",
	"log in to continue",
	"create an account to continue",
	"members only",
	"premium content",
	"paywall",
}

// Signals returns the quality signals for content whose text form is
// text and markdown form markdown, with words whitespace-separated words.
// rawHTMLBytes is the size of the source page; sourceHTML says the source
// was HTML and extracted that main-content extraction produced the
// content. The boilerplate signal applies only to HTML rendered whole. The
// result is never nil.
func Signals(text, markdown string, rawHTMLBytes int, sourceHTML, extracted bool, words int) []string {
	out := []string{}
	if words > 0 && words < 60 {
		out = append(out, SignalVeryShort)
	}
	if containsAnyFold(text, paywallPhrases) || containsAnyFold(markdown, paywallPhrases) {
		out = append(out, SignalPaywall)
	}
	if sourceHTML && !extracted && rawHTMLBytes/max(len(text), 1) >= 10 && words < 1200 {
		out = append(out, SignalBoilerplate)
	}
	if words == 0 {
		out = append(out, SignalEmpty)
	}
	return out
}

// containsAnyFold reports whether strings.ToLower(s) contains one of the
// phrases (lowercase ASCII), without building the lowered copy (a
// megabyte for a large page) or scanning it once per phrase: one pass
// looks up each byte and the next in tables of the phrases' first and
// second characters, and compares only where both fit.
func containsAnyFold(s string, phrases []string) bool {
	// first[b] and second[b] hold the bit of each phrase whose first
	// (second) character the byte b can be; single holds the phrases of
	// one character. Phrases from the 64th on share the last bit.
	var first, second [256]uint64
	var single uint64
	bitOf := func(k int) uint64 { return 1 << min(k, 63) }
	set := func(table *[256]uint64, c byte, bit uint64) {
		table[c] |= bit
		if 'a' <= c && c <= 'z' {
			table[c-'a'+'A'] |= bit
		}
	}
	for k, p := range phrases {
		bit := bitOf(k)
		set(&first, p[0], bit)
		// The only characters outside ASCII that lower to ASCII letters;
		// the character after them is not looked up.
		switch p[0] {
		case 'i':
			first["\u0130"[0]] |= bit
		case 'k':
			first["\u212A"[0]] |= bit
		}
		if len(p) == 1 {
			single |= bit
			for b := range second {
				second[b] |= bit
			}
			continue
		}
		set(&second, p[1], bit)
		for b := utf8.RuneSelf; b < len(second); b++ {
			second[b] |= bit // a character outside ASCII: compare
		}
	}
	for i := 0; i < len(s); i++ {
		m := first[s[i]]
		if m == 0 {
			continue
		}
		if s[i] < utf8.RuneSelf {
			if i+1 < len(s) {
				m &= second[s[i+1]]
			} else {
				m &= single
			}
		}
		for k := 0; m != 0 && k < len(phrases); k++ {
			bit := bitOf(k)
			if m&bit == 0 {
				continue
			}
			if hasLowerPrefix(s[i:], phrases[k]) {
				return true
			}
			if k < 63 {
				m &^= bit
			}
		}
	}
	return false
}

// hasLowerPrefix reports whether the lowered runes of s start with p, an
// ASCII string.
func hasLowerPrefix(s, p string) bool {
	for j := 0; j < len(p); j++ {
		if s == "" {
			return false
		}
		c, size := lowerASCII(s)
		if c != p[j] {
			return false
		}
		s = s[size:]
	}
	return true
}

// lowerASCII returns what unicode.ToLower makes of the first rune of s if
// that is ASCII, else utf8.RuneSelf (no ASCII character), and the rune's
// length. U+0130 (İ, lowered to i) and U+212A (the Kelvin sign, lowered to
// k) are the only characters outside ASCII that lower into it.
func lowerASCII(s string) (byte, int) {
	c := s[0]
	switch {
	case c < utf8.RuneSelf:
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return c, 1
	case strings.HasPrefix(s, "\u0130"):
		return 'i', len("\u0130")
	case strings.HasPrefix(s, "\u212A"):
		return 'k', len("\u212A")
	}
	_, size := utf8.DecodeRuneInString(s)
	return utf8.RuneSelf, size
}

// jsRenderedWords is the body text size under which a page that depends
// on scripts is taken to be rendered in the browser.
const jsRenderedWords = 50

// likelyJSRendered reports whether doc looks like a page whose content
// scripts build: its body holds fewer than jsRenderedWords words (script,
// style, template and noscript text not counted) and it has at least three
// <script> elements or a <noscript> that asks to enable JavaScript. The
// walk stops at the word that makes the answer no.
func likelyJSRendered(doc *html.Node) bool {
	var words, scripts int
	asks := false
	var visit func(n *html.Node, inHead bool)
	visit = func(n *html.Node, inHead bool) {
		switch n.Type {
		case html.TextNode:
			if !inHead {
				// The head's scripts count, its text (the title) does not.
				words += countFields(n.Data)
			}
			return
		case html.ElementNode:
			switch n.Data {
			case "script":
				scripts++
				return
			case "noscript":
				// The parser keeps <noscript> content as raw text.
				t := strings.ToLower(textOfRaw(n))
				if strings.Contains(t, "javascript") && (strings.Contains(t, "enable") || strings.Contains(t, "turn on") ||
					strings.Contains(t, "requires") || strings.Contains(t, "required") || strings.Contains(t, "need")) {
					asks = true
				}
				return
			case "style", "template":
				return
			}
		}
		inHead = inHead || n.Type == html.ElementNode && n.Data == "head"
		for c := n.FirstChild; c != nil && words < jsRenderedWords; c = c.NextSibling {
			visit(c, inHead)
		}
	}
	visit(doc, false)
	return words < jsRenderedWords && (scripts >= 3 || asks)
}

// textOfRaw returns the text of n's children, whether the parser kept them
// as one raw text node or as elements.
func textOfRaw(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) bool {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		return true
	})
	return b.String()
}
