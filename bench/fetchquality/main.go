// Command fetchquality measures how well main-content extractors keep a
// documentation page's content and drop its navigation, and how long they
// take, over a corpus of real pages on disk.
//
// Usage (from bench/fetchquality, which is its own module):
//
//	go run . [-per N] [-runs N] [-only NAME,...] [-explain] PATH...
//
// Each PATH is an HTML file or a directory searched recursively for
// *.html; from each directory at most N pages (default 8) are taken,
// evenly spaced in name order, so the sample is the same on every run
// (-per 0 takes them all). -only runs some candidates, -explain prints to
// stderr, per page and candidate, the content tokens missed and the
// navigation tokens leaked. bench/fetch.sh passes the corpus.
//
// For every page the program finds the main content element by the first
// of these selectors that matches exactly one element:
//
//	#main-content   rustdoc
//	#apicontent     Node.js API docs
//	#_content       npm CLI docs
//	main            mdBook and most modern sites
//	[role=main]
//	article
//	body            page fragments with no chrome (the Go spec)
//
// Its text (without nav, aside and role=navigation elements inside it,
// and, when the element is the body, without header and footer) is the
// content; the text of the rest of the body (outside the element, plus
// those parts) is the navigation.
//
// A page named source.html with an expected.html beside it (the layout of
// Readability's own test pages, a corpus of news and blog articles) is
// scored against that reference extraction instead: its text is the
// content, the rest of the page the navigation. Readability scores close
// to 1 there by construction; the corpus shows whether another candidate
// keeps articles as well.
//
// Texts are compared as multisets of lowercase tokens (runs of letters and
// digits); a candidate's markdown is reduced to text by dropping link and
// image destinations first.
//
//   - recall: the share of content tokens found in the output;
//   - leak: the share of navigation tokens found in the output beyond
//     what the content itself accounts for (for each token, the output's
//     count minus the content's count, capped at the navigation's count);
//   - time: the median over -runs runs of the whole conversion from the
//     HTML string (parse included), in process.
//
// Candidates:
//
//	slim           extract.HTML with main-content extraction, its markdown
//	readability    go-readability v2 with default options, its article
//	               converted by html-to-markdown (base, commonmark, table)
//	whole          html-to-markdown of the whole page (no main-content step)
//	trafilatura    go-trafilatura, default options, content converted the
//	               same way
//	trafilatura+fb the same with its fallback extractors enabled
//
// It prints one row per page and a summary line per candidate.
//
// The module's replace directive points at the repository but, as Go
// applies only the main module's replacements, Readability here is the
// released module rather than the repository's patched copy (which
// differs only in compiling its regular expressions on first use). The
// markdown converter is replaced here too, by the repository's patched
// copy (the same output, faster), so slim's times are the shipped ones.
//
// initprobe/trafilatura and initprobe/slim are empty programs that link
// go-trafilatura and slim's extractor respectively; run them with
// GODEBUG=inittrace=1 to see each one's package initialisation cost.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	"github.com/slimgate/slim/fetch/internal/extract"
)

type candidate struct {
	name string
	run  func(src string, base *url.URL) (string, error)
}

var candidates = []candidate{
	{"slim", func(src string, base *url.URL) (string, error) {
		p, err := extract.HTML(src, base, true)
		if err != nil {
			return "", err
		}
		return p.Markdown, nil
	}},
	{"readability", func(src string, base *url.URL) (string, error) {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			return "", err
		}
		p := readability.NewParser()
		a, err := p.ParseAndMutate(doc, base)
		if err != nil || a.Node == nil {
			return "", err
		}
		return toMarkdown(a.Node, base)
	}},
	{"whole", func(src string, base *url.URL) (string, error) {
		doc, err := html.Parse(strings.NewReader(src))
		if err != nil {
			return "", err
		}
		return toMarkdown(doc, base)
	}},
	{"trafilatura", func(src string, base *url.URL) (string, error) {
		return runTrafilatura(src, base, false)
	}},
	{"trafilatura+fb", func(src string, base *url.URL) (string, error) {
		return runTrafilatura(src, base, true)
	}},
}

func runTrafilatura(src string, base *url.URL, fallback bool) (string, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", err
	}
	r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{OriginalURL: base, EnableFallback: fallback, IncludeLinks: true})
	if err != nil || r == nil || r.ContentNode == nil {
		return "", err
	}
	return toMarkdown(r.ContentNode, base)
}

func toMarkdown(n *html.Node, page *url.URL) (string, error) {
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	md, err := conv.ConvertNode(n, converter.WithDomain(page.String()))
	return string(md), err
}

// selectors find a page's main content element, most specific first.
var selectors = []struct {
	name  string
	match func(*html.Node) bool
}{
	{"#main-content", byID("main-content")},
	{"#apicontent", byID("apicontent")},
	{"#_content", byID("_content")},
	{"main", byTag("main")},
	{"[role=main]", func(n *html.Node) bool { return attr(n, "role") == "main" }},
	{"article", byTag("article")},
	{"body", byTag("body")},
}

func byID(id string) func(*html.Node) bool {
	return func(n *html.Node) bool { return attr(n, "id") == id }
}

func byTag(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == tag }
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	return out
}

func isNav(n *html.Node) bool {
	return n.Type == html.ElementNode && (n.Data == "nav" || n.Data == "aside" || attr(n, "role") == "navigation")
}

// truth splits a page's body text into content and navigation. When
// expected is not empty it is the page's reference extraction: its text is
// the content and the rest of the body's text the navigation.
func truth(src, expected string) (selector string, content, nav bag, err error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return "", nil, nil, err
	}
	if expected != "" {
		exp, err := html.Parse(strings.NewReader(expected))
		if err != nil {
			return "", nil, nil, err
		}
		content, nav = bag{}, bag{}
		content.addText(visibleText(exp))
		nav.addText(visibleText(doc))
		for t, c := range content {
			nav[t] = max(nav[t]-c, 0)
		}
		return "expected", content, nav, nil
	}
	var main *html.Node
	for _, s := range selectors {
		if found := findAll(doc, s.match); len(found) == 1 {
			selector, main = s.name, found[0]
			break
		}
	}
	if main == nil {
		return "", nil, nil, fmt.Errorf("no main element")
	}
	content, nav = bag{}, bag{}
	var visit func(n *html.Node, inMain, inNav bool)
	visit = func(n *html.Node, inMain, inNav bool) {
		switch n.Type {
		case html.TextNode:
			if inMain && !inNav {
				content.addText(n.Data)
			} else {
				nav.addText(n.Data)
			}
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template", "head":
				return
			}
		}
		inMain = inMain || n == main
		inNav = inNav || (inMain && isNav(n)) || (inMain && selector == "body" && n.Type == html.ElementNode && (n.Data == "header" || n.Data == "footer"))
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c, inMain, inNav)
		}
	}
	body := findAll(doc, byTag("body"))
	if len(body) == 0 {
		return "", nil, nil, fmt.Errorf("no body")
	}
	visit(body[0], false, false)
	return selector, content, nav, nil
}

// visibleText is the text of n without scripts, styles and the head.
func visibleText(n *html.Node) string {
	var b strings.Builder
	var visit func(*html.Node)
	visit = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			b.WriteByte(' ')
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template", "head":
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(n)
	return b.String()
}

// bag is a multiset of tokens.
type bag map[string]int

func (b bag) addText(s string) {
	for _, t := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		b[t]++
	}
}

func (b bag) total() int {
	n := 0
	for _, c := range b {
		n += c
	}
	return n
}

// destinations matches the "(url "title")" part of markdown links and
// images, so that URLs do not count as text.
var destinations = regexp.MustCompile(`\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)`)

func markdownBag(md string) bag {
	b := bag{}
	b.addText(destinations.ReplaceAllString(md, "]"))
	return b
}

// diff lists the content tokens out misses and the navigation tokens it
// leaks, with counts, most frequent first (at most 40 each).
func diff(out, content, nav bag) (missed, leaked string) {
	list := func(m map[string]int) string {
		type kv struct {
			k string
			v int
		}
		var kvs []kv
		for k, v := range m {
			if v > 0 {
				kvs = append(kvs, kv{k, v})
			}
		}
		slices.SortFunc(kvs, func(a, b kv) int { return cmp.Or(b.v-a.v, cmp.Compare(a.k, b.k)) })
		var parts []string
		for i, e := range kvs {
			if i == 40 {
				parts = append(parts, "...")
				break
			}
			parts = append(parts, fmt.Sprintf("%s:%d", e.k, e.v))
		}
		return strings.Join(parts, " ")
	}
	m, l := map[string]int{}, map[string]int{}
	for t, c := range content {
		m[t] = c - min(out[t], c)
	}
	for t, c := range nav {
		l[t] = min(max(out[t]-content[t], 0), c)
	}
	return list(m), list(l)
}

// score computes recall and leak of out against content and nav.
func score(out, content, nav bag) (recall, leak float64) {
	var hit, extra int
	for t, c := range content {
		hit += min(out[t], c)
	}
	for t, c := range nav {
		extra += min(max(out[t]-content[t], 0), c)
	}
	recall, leak = 1, 0
	if n := content.total(); n > 0 {
		recall = float64(hit) / float64(n)
	}
	if n := nav.total(); n > 0 {
		leak = float64(extra) / float64(n)
	}
	return recall, leak
}

func main() {
	per := flag.Int("per", 8, "pages taken from each directory")
	runs := flag.Int("runs", 5, "timed runs per page and candidate (the median is reported)")
	only := flag.String("only", "", "comma-separated candidate names to run (default all)")
	explain := flag.Bool("explain", false, "print, per page and candidate, the content tokens missed and the navigation tokens leaked")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: fetchquality [-per N] [-runs N] [-only a,b] PATH...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cands := candidates
	if *only != "" {
		want := strings.Split(*only, ",")
		cands = slices.DeleteFunc(slices.Clone(candidates), func(c candidate) bool { return !slices.Contains(want, c.name) })
	}

	pages, err := corpus(flag.Args(), *per)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fetchquality:", err)
		os.Exit(1)
	}

	type result struct {
		recall, leak float64
		ms           float64
		failed       bool
	}
	results := make([][]result, len(cands))
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 1, ' ', tabwriter.AlignRight)
	header := "page\tKiB\tselector\tcontent\tnav\t"
	for _, c := range cands {
		header += c.name + " r\tl\tms\t"
	}
	fmt.Fprintln(tw, header)
	for _, path := range pages {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fetchquality:", err)
			os.Exit(1)
		}
		src := string(b)
		var expected string
		if filepath.Base(path) == "source.html" {
			if e, err := os.ReadFile(filepath.Join(filepath.Dir(path), "expected.html")); err == nil {
				expected = string(e)
			}
		}
		sel, content, nav, err := truth(src, expected)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fetchquality: %s: %v (skipped)\n", path, err)
			continue
		}
		baseURL := &url.URL{Scheme: "https", Host: "docs.example", Path: "/" + filepath.ToSlash(shortName(path))}
		row := fmt.Sprintf("%s\t%d\t%s\t%d\t%d\t", shortName(path), len(b)/1024, sel, content.total(), nav.total())
		for i, c := range cands {
			var out string
			var times []time.Duration
			var runErr error
			for range max(*runs, 1) {
				start := time.Now()
				out, runErr = c.run(src, baseURL)
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			r := result{ms: float64(times[len(times)/2].Microseconds()) / 1000}
			if runErr != nil {
				r.failed = true
			}
			outBag := markdownBag(out)
			r.recall, r.leak = score(outBag, content, nav)
			if *explain {
				missed, leaked := diff(outBag, content, nav)
				fmt.Fprintf(os.Stderr, "%s %s\n  missed: %s\n  leaked: %s\n", shortName(path), c.name, missed, leaked)
			}
			results[i] = append(results[i], r)
			row += fmt.Sprintf("%.3f\t%.3f\t%.1f\t", r.recall, r.leak, r.ms)
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()

	fmt.Println()
	for i, c := range cands {
		rs := results[i]
		if len(rs) == 0 {
			continue
		}
		var sumR, sumL float64
		var ms []float64
		low, failed := 0, 0
		for _, r := range rs {
			sumR += r.recall
			sumL += r.leak
			ms = append(ms, r.ms)
			if r.recall < 0.9 {
				low++
			}
			if r.failed {
				failed++
			}
		}
		slices.Sort(ms)
		var total float64
		for _, m := range ms {
			total += m
		}
		fmt.Printf("%-15s pages %d  mean recall %.3f  mean leak %.3f  recall<0.9 on %d  errors %d  median %.1f ms  max %.1f ms  total %.0f ms\n",
			c.name, len(rs), sumR/float64(len(rs)), sumL/float64(len(rs)), low, failed, ms[len(ms)/2], ms[len(ms)-1], total)
	}
}

// corpus lists the pages: files as given, and from each directory at most
// per *.html files, evenly spaced in name order.
func corpus(paths []string, per int) ([]string, error) {
	var out []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		var files []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".html") {
				return nil
			}
			if filepath.Base(path) == "expected.html" {
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), "source.html")); err == nil {
					return nil // the reference for source.html, not a page
				}
			}
			files = append(files, path)
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(files, cmp.Compare)
		if per <= 0 || len(files) <= per {
			out = append(out, files...)
			continue
		}
		for i := range per {
			out = append(out, files[i*len(files)/per])
		}
	}
	return out, nil
}

// shortName is the last three components of path.
func shortName(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	if len(parts) > 3 {
		parts = parts[len(parts)-3:]
	}
	return strings.Join(parts, "/")
}
