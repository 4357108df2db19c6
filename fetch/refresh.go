package fetch

import (
	"strconv"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
	"golang.org/x/net/html"
)

// maxRefreshDelay is the longest <meta http-equiv="refresh"> delay taken as
// a redirect; longer ones are a page that reloads itself.
const maxRefreshDelay = 10

// metaRefresh returns the target of a client-side redirect in the page's
// head (<meta http-equiv="refresh" content="0; url=...">), resolved against
// base, or nil. Only the markup before the body is read.
func metaRefresh(src string, base *whatwg.Url) *whatwg.Url {
	z := html.NewTokenizer(strings.NewReader(src))
	for n := 0; n < 4096; n++ {
		switch z.Next() {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			switch string(name) {
			case "body":
				return nil
			case "meta":
				if !hasAttr {
					continue
				}
				var equiv, content string
				for {
					k, v, more := z.TagAttr()
					switch strings.ToLower(string(k)) {
					case "http-equiv":
						equiv = strings.ToLower(strings.TrimSpace(string(v)))
					case "content":
						content = string(v)
					}
					if !more {
						break
					}
				}
				if equiv != "refresh" {
					continue
				}
				if u := refreshTarget(content, base); u != nil {
					return u
				}
			}
		}
	}
	return nil
}

// refreshTarget parses a refresh content value: "DELAY; url=URL" (the
// "url=" and quotes optional).
func refreshTarget(content string, base *whatwg.Url) *whatwg.Url {
	delay, rest, ok := strings.Cut(strings.TrimSpace(content), ";")
	if !ok {
		delay, rest, ok = strings.Cut(strings.TrimSpace(content), ",")
	}
	if !ok {
		return nil
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(delay), 64)
	if err != nil || d < 0 || d > maxRefreshDelay {
		return nil
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 4 && strings.EqualFold(rest[:3], "url") {
		r := strings.TrimSpace(rest[3:])
		if strings.HasPrefix(r, "=") {
			rest = strings.TrimSpace(r[1:])
		}
	}
	rest = strings.Trim(rest, `"'`)
	if rest == "" {
		return nil
	}
	u, err := base.Parse(rest)
	if err != nil {
		return nil
	}
	u.SetHash("")
	if href(u) == href(base) {
		return nil
	}
	return u
}
