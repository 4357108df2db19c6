package extract

import (
	"slices"
	"strings"
	"testing"
)

func TestCleanMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"an image alone on its line", "text\n\n![alt](https://x/a.png)\n\nmore", "text\n\nImage omitted\n\nmore"},
		{"a linked image and two images", "[![a](https://x/a.png)](https://x) ![b](https://x/b.png \"t\")", "Image omitted"},
		{"an image inside prose stays", "see ![a](https://x/a.png) here", "see ![a](https://x/a.png) here"},
		{"the word Image alone", "Image", "Image omitted"},
		{"quoted headings lose quotes and brackets", "## ['Foo'\n\n## 'Bar']\n\n### 'Baz'", "## Foo\n\n## Bar\n\n### Baz"},
		{"a quote inside is left alone", "## 'it's'", "## 'it's'"},
		{"a trailing permalink on a heading", `## Install [¶](#install "Permanent link")`, "## Install"},
		{"an absolute symbol link on a heading", "### Usage [#](https://x/page#usage)", "### Usage"},
		{"an anchor at the end of a heading", "## Changes (#changes)", "## Changes"},
		{"an issue reference at the end of a heading goes", "## Fix crash (#1234)", "## Fix crash"},
		{"an issue reference in prose stays", "- Fix crash (#1234)\nAlso (#99)", "- Fix crash (#1234)\nAlso (#99)"},
		{"a word link at the end of a heading stays", "## See [docs](#docs)", "## See [docs](#docs)"},
		{"a closing sequence goes with the anchor", "## Title (#t) ##", "## Title"},
		{"blank runs collapse and the ends are trimmed", "\n\n\na\n\n\n\n\nb\n  \n\t\nc\n\n", "a\n\nb\n\nc"},
		{"CRLF line ends", "a\r\n\r\n\r\nb", "a\n\nb"},
		{
			"code blocks are left as they are",
			"```\n![x](y)\n## 'Q'\n\n\n\nImage\n```\n~~~~go\n## (#a)\n~~~\n~~~~\nafter",
			"```\n![x](y)\n## 'Q'\n\n\n\nImage\n```\n~~~~go\n## (#a)\n~~~\n~~~~\nafter",
		},
		{"an unclosed fence runs to the end", "```\n\n\n\nImage", "```\n\n\n\nImage"},
		{"a backtick fence whose info has a backtick is not a fence", "``` a`b\nImage", "``` a`b\nImage omitted"},
		{"indented four spaces is not a fence", "x\n    ```\nImage", "x\n    ```\nImage omitted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CleanMarkdown(tc.in); got != tc.want {
				t.Errorf("CleanMarkdown(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMarkdownHeadings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"levels one to six, closing sequences and anchors", "# One #\n## Two (#two)\n###### Six\n####### Seven\n#NoSpace", []string{"One", "Two", "Six"}},
		{"not inside code", "```\n# comment\n```\n# Real", []string{"Real"}},
		{"empty headings are dropped", "#\n## \n## ¶\n# x", []string{"x"}},
		{"C# is kept", "# C#\n# Learn F# ¶", []string{"C#", "Learn F#"}},
		{"at most twelve", "# a\n# b\n# c\n# d\n# e\n# f\n# g\n# h\n# i\n# j\n# k\n# l\n# m\n# n", []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}},
		{"none", "plain text", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MarkdownHeadings(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("MarkdownHeadings = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFrontmatterURL(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bare", "---\nurl: https://site.example.com/real\n---\nbody", "https://site.example.com/real"},
		{"quoted", "---\ntitle: x\nurl: \"https://a.example/b\"\n---\n", "https://a.example/b"},
		{"single quoted, closed by dots", "---\nurl: 'https://a.example/c'\n...\n", "https://a.example/c"},
		{"the first url wins", "---\nurl: https://a.example/1\nurl: https://a.example/2\n---\n", "https://a.example/1"},
		{"a nested key is not the url", "---\nlinks:\n  url: https://a.example/nested\n---\n", ""},
		{"a key that only starts with url", "---\nurls: https://a.example/x\n---\n", ""},
		{"never closed", "---\nurl: https://a.example/x\n", ""},
		{"not at the start", "intro\n---\nurl: https://a.example/x\n---\n", ""},
		{"no front matter", "# Title", ""},
		{"a byte order mark first", "\uFEFF---\nurl: https://a.example/bom\n---\n", "https://a.example/bom"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FrontmatterURL(tc.in); got != tc.want {
				t.Errorf("FrontmatterURL = %q, want %q", got, tc.want)
			}
		})
	}
}

// showAnglesInPlace must give what replacing the stand-ins in a copy
// gives, whatever surrounds them: other characters sharing their first
// two bytes (U+FDD2, U+FDE0), a stand-in cut short at the end, none at
// all.
func TestShowAnglesInPlace(t *testing.T) {
	show := strings.NewReplacer(ltStandIn, "<", gtStandIn, ">")
	for _, s := range []string{
		"", "plain", ltStandIn, gtStandIn + ltStandIn,
		"List" + ltStandIn + "String" + gtStandIn + " and Map" + ltStandIn + "K, V" + gtStandIn,
		"a\uFDD2b" + ltStandIn + "\uFDE0" + gtStandIn,
		"cut " + ltStandIn[:2], "cut " + ltStandIn[:1], ltStandIn + ltStandIn[:2] + gtStandIn,
	} {
		if got, want := string(showAnglesInPlace([]byte(s))), show.Replace(s); got != want {
			t.Errorf("showAnglesInPlace(%q) = %q, want %q", s, got, want)
		}
	}
}
