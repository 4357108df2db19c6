package binsave

import (
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Filename takes filename* first, then filename= (quoted, bare, or from a
// header mime.ParseMediaType rejects), then the URL's last segment when it
// has an extension, and sanitizes what it takes.
func TestFilenameTakesDispositionThenURL(t *testing.T) {
	cases := []struct {
		name, cd, url, want string
	}{
		{"RFC 5987 UTF-8", `attachment; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.pdf`, "", "naïve résumé.pdf"},
		{"filename* beats an earlier filename", `attachment; filename="plain.pdf"; filename*=UTF-8''fancy%20x.pdf`, "", "fancy x.pdf"},
		{"filename* beats a later filename", `attachment; filename*=utf-8'en'%E2%82%AC%20rates.pdf; filename="rates.pdf"`, "", "€ rates.pdf"},
		{"ISO-8859-1 filename*", `attachment; filename*=ISO-8859-1''caf%E9.pdf; filename="cafe.pdf"`, "", "café.pdf"},
		{"unknown charset falls back to filename", `attachment; filename*=KOI8-R''%C1.pdf; filename="koi.pdf"`, "", "koi.pdf"},
		{"invalid UTF-8 after decoding", `attachment; filename*=UTF-8''a%FFb.pdf`, "", "a_b.pdf"},
		{"path traversal", `attachment; filename="../../etc/passwd"`, "https://x.example.com/f.pdf", "_.._etc_passwd"},
		{"device name", `attachment; filename="CON.pdf"`, "", "_CON.pdf"},
		{"unquoted with a space", `attachment; filename=report final.pdf`, "", "report final.pdf"},
		{"unquoted, more parameters", `attachment; filename=report final.pdf; size=10`, "", "report final.pdf"},
		{"no disposition type", `filename="x.pdf"`, "", "x.pdf"},
		{"escaped quote", `attachment; filename="a\"b.pdf"`, "", "a_b.pdf"},
		{"control characters", "attachment; filename=\"a\x01b\x7fc.pdf\"", "", "a_b_c.pdf"},
		{"header injection", "attachment; filename=\"x\r\nSet-Cookie: a.pdf\"", "", "x__Set-Cookie_ a.pdf"},
		{"empty filename falls back to the URL", `attachment; filename=""`, "https://x.example.com/files/report.v2.pdf", "report.v2.pdf"},
		{"URL segment", "", "https://x.example.com/files/report.v2.pdf?x=1", "report.v2.pdf"},
		{"URL segment percent-decoded", "", "https://x.example.com/files/na%C3%AFve%20file.pdf", "naïve file.pdf"},
		{"encoded slash in a segment", "", "https://x.example.com/a/b%2Fc.pdf", "b_c.pdf"},
		{"trailing slash", "", "https://x.example.com/files/archive.tar.gz/", "archive.tar.gz"},
		{"segment without a dot", "", "https://x.example.com/download", ""},
		{"only the last segment counts", "", "https://x.example.com/a.pdf/download", ""},
		{"dot segment", "", "https://x.example.com/a/..", ""},
		{"hidden-file segment", "", "https://x.example.com/a/.bashrc", ""},
		{"no path", "", "https://x.example.com", ""},
		{"inline, no name", `inline`, "https://x.example.com/", ""},
	}
	for _, c := range cases {
		var u *url.URL
		if c.url != "" {
			u = mustURL(t, c.url)
		}
		if got := Filename(c.cd, u); got != c.want {
			t.Errorf("%s: Filename(%q, %q) = %q, want %q", c.name, c.cd, c.url, got, c.want)
		}
	}
	if got := Filename("", nil); got != "" {
		t.Errorf("Filename with nothing = %q", got)
	}
}

// Sanitize replaces what file systems refuse, collapses whitespace, strips
// edge dots and spaces, prefixes device names and cuts long names keeping
// the extension, within 180 runes and 240 bytes.
func TestSanitizeMakesOneSafeName(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"", "download"},
		{"...", "download"},
		{" . ", "download"},
		{"  a \t\n b  ", "a __ b"},
		{"a   b\u00a0\u3000c.pdf", "a b c.pdf"},
		{"a\x00b", "a_b"},
		{`<>:"/\|?*`, "_________"},
		{"..hidden..", "hidden"},
		{"a\xffb.pdf", "a_b.pdf"},
		{"evil\u202Efdp.exe", "evil_fdp.exe"},
		{"nul", "_nul"},
		{"Lpt9.txt", "_Lpt9.txt"},
		{"aux.tar.gz", "_aux.tar.gz"},
		{"COM¹.log", "_COM¹.log"},
		{"con .txt", "_con .txt"},
		{"CONIN$", "_CONIN$"},
		{"COM10", "COM10"},
		{"CONSOLE.txt", "CONSOLE.txt"},
		{"prn-notes.md", "prn-notes.md"},
		{long + ".pdf", strings.Repeat("x", 176) + ".pdf"},
		{long, strings.Repeat("x", 180)},
		{"a." + long, "a." + strings.Repeat("x", 178)},
		{strings.Repeat("é", 300) + ".pdf", strings.Repeat("é", 118) + ".pdf"},
		{strings.Repeat("x", 175) + "    .....y.pdf", strings.Repeat("x", 175) + ".pdf"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FallbackName is webfetch-<unix ms>.<ext>.
func TestFallbackNameCarriesTheTimeAndExtension(t *testing.T) {
	at := time.UnixMilli(1767225600123)
	if got := FallbackName(at, "jpg"); got != "webfetch-1767225600123.jpg" {
		t.Fatalf("got %q", got)
	}
	if got := FallbackName(at, ""); got != "webfetch-1767225600123" {
		t.Fatalf("got %q", got)
	}
}

// checkName holds the shape every sanitized name has.
func checkName(t *testing.T, in, got string) {
	t.Helper()
	switch {
	case got == "":
		t.Fatalf("Sanitize(%q) is empty", in)
	case strings.ContainsAny(got, "/\\\x00"):
		t.Fatalf("Sanitize(%q) = %q holds a separator or NUL", in, got)
	case !utf8.ValidString(got):
		t.Fatalf("Sanitize(%q) = %q is not UTF-8", in, got)
	case utf8.RuneCountInString(got) > MaxNameRunes || len(got) > MaxNameBytes:
		t.Fatalf("Sanitize(%q) = %q is too long (%d runes, %d bytes)", in, got, utf8.RuneCountInString(got), len(got))
	case strings.Trim(got, " .") != got:
		t.Fatalf("Sanitize(%q) = %q has edge dots or spaces", in, got)
	case isDeviceName(got):
		t.Fatalf("Sanitize(%q) = %q is a device name", in, got)
	}
	for _, r := range got {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(reserved, r) || isBidiControl(r) {
			t.Fatalf("Sanitize(%q) = %q keeps %U", in, got, r)
		}
	}
	if again := Sanitize(got); again != got {
		t.Fatalf("Sanitize is not idempotent: %q -> %q -> %q", in, got, again)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"", "../../etc/passwd", "CON.pdf", "naïve résumé.pdf", "a\x00b", strings.Repeat("é", 200) + ".pdf", "x.\u202e" + strings.Repeat("y", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		checkName(t, name, Sanitize(name))
	})
}

func FuzzFilename(f *testing.F) {
	f.Add(`attachment; filename*=UTF-8''na%C3%AFve.pdf`, "/a/b.pdf")
	f.Add(`attachment; filename=report final.pdf`, "/x")
	f.Add(`filename="../../etc/passwd"`, "/%2e%2e/x.y")
	f.Fuzz(func(t *testing.T, cd, path string) {
		u := &url.URL{Scheme: "https", Host: "x.example.com", Path: path}
		got := Filename(cd, u)
		if got != "" {
			checkName(t, cd+" | "+path, got)
		}
		if p, err := url.Parse("https://x.example.com/" + path); err == nil {
			if got := Filename(cd, p); got != "" {
				checkName(t, cd+" | "+path, got)
			}
		}
	})
}
