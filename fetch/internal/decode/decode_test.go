package decode

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/japanese"
)

func shiftJIS(t *testing.T, s string) []byte {
	t.Helper()
	b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecode(t *testing.T) {
	prose := strings.Repeat("Plain words for a page that declares nothing. ", 20)
	japaneseText := "日本語のテキストです。文字化けしないこと。"
	sjisPage := func(t *testing.T) []byte {
		return append([]byte(`<!doctype html><html><head><meta charset="Shift_JIS"><title>t</title></head><body><p>`),
			append(shiftJIS(t, japaneseText), []byte(`</p></body></html>`)...)...)
	}

	tests := []struct {
		name     string
		body     func(t *testing.T) []byte
		header   string
		htmlLike bool
		contains string
		want     Result // Text is not compared; contains is checked instead
		absent   string
	}{
		{
			name:     "undeclared latin byte is guessed as windows-1252 and flagged",
			body:     func(*testing.T) []byte { return []byte("<html><body><p>caf\xE9 " + prose + "</p></body></html>") },
			htmlLike: true,
			contains: "café",
			want:     Result{Charset: "windows-1252", Fallback: true, Warning: "Guessed charset without declaration: windows-1252"},
		},
		{
			name:     "meta charset Shift_JIS decodes the Japanese text and keeps the label as declared",
			body:     sjisPage,
			htmlLike: true,
			contains: japaneseText,
			want:     Result{Charset: "Shift_JIS"},
		},
		{
			name: "http-equiv content-type is used when there is no meta charset",
			body: func(t *testing.T) []byte {
				return append([]byte(`<html><head><meta http-equiv="Content-Type" content="text/html; charset=shift_jis"></head><body>`),
					shiftJIS(t, japaneseText)...)
			},
			htmlLike: true,
			contains: japaneseText,
			want:     Result{Charset: "shift_jis"},
		},
		{
			name: "meta charset is found anywhere in the page, not only in the first kilobyte",
			body: func(t *testing.T) []byte {
				return append([]byte("<html><head><!-- "+strings.Repeat("x", 5000)+` --><meta charset="shift_jis"></head><body>`),
					shiftJIS(t, japaneseText)...)
			},
			htmlLike: true,
			contains: japaneseText,
			want:     Result{Charset: "shift_jis"},
		},
		{
			name:     "meta prescan only applies to HTML",
			body:     sjisPage,
			htmlLike: false,
			absent:   japaneseText,
			want:     Result{Charset: "windows-1252", Fallback: true, Warning: "Guessed charset without declaration: windows-1252"},
		},
		{
			name:     "an unknown header label decodes as UTF-8 with a warning",
			body:     func(*testing.T) []byte { return []byte("<p>naïve</p>") },
			header:   "x-bogus",
			htmlLike: true,
			contains: "naïve",
			want:     Result{Charset: "utf-8", Fallback: true, Warning: "Unsupported charset decoder: x-bogus"},
		},
		{
			name:     "a label the standard maps to the replacement encoding is unsupported",
			body:     func(*testing.T) []byte { return []byte("text") },
			header:   "iso-2022-kr",
			contains: "text",
			want:     Result{Charset: "utf-8", Fallback: true, Warning: "Unsupported charset decoder: iso-2022-kr"},
		},
		{
			name: "1500 ASCII bytes then UTF-8 is UTF-8, decided over the whole body",
			body: func(*testing.T) []byte {
				return []byte("<html><body><p>" + strings.Repeat("a", 1500) + " naïve</p></body></html>")
			},
			htmlLike: true,
			contains: "naïve",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "pure ASCII is UTF-8, not windows-1252",
			body:     func(*testing.T) []byte { return []byte(prose) },
			contains: "Plain words",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "a UTF-8 byte order mark is removed",
			body:     func(*testing.T) []byte { return []byte("\xEF\xBB\xBF<!doctype html><p>x</p>") },
			contains: "<!doctype html>",
			absent:   "\uFEFF",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "a byte order mark wins over the header",
			body:     func(*testing.T) []byte { return []byte("\xEF\xBB\xBFnaïve") },
			header:   "windows-1252",
			contains: "naïve",
			absent:   "\uFEFF",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "a UTF-16LE byte order mark decodes UTF-16",
			body:     func(*testing.T) []byte { return []byte{0xFF, 0xFE, 'h', 0, 'i', 0} },
			contains: "hi",
			absent:   "\uFEFF",
			want:     Result{Charset: "utf-16le"},
		},
		{
			name:     "latin1 in the header is windows-1252 and is reported as declared",
			body:     func(*testing.T) []byte { return []byte("\x93quoted\x94 caf\xE9") },
			header:   `"ISO-8859-1"`,
			contains: "\u201cquoted\u201d café",
			want:     Result{Charset: "ISO-8859-1"},
		},
		{
			name:     "a declared UTF-8 body with bad bytes is decoded leniently",
			body:     func(*testing.T) []byte { return []byte("ok \xFF ok") },
			header:   "utf-8",
			contains: "ok \uFFFD ok",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "a meta that declares UTF-16 over an ASCII page means UTF-8",
			body:     func(*testing.T) []byte { return []byte(`<meta charset="utf-16"><p>naïve</p>`) },
			htmlLike: true,
			contains: "naïve",
			want:     Result{Charset: "utf-16"},
		},
		{
			name:     "<metadata> is not a meta element",
			body:     func(*testing.T) []byte { return []byte(`<metadata charset="shift_jis"><p>naïve</p>`) },
			htmlLike: true,
			contains: "naïve",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "bytes that look like nothing decode as lenient UTF-8 without a flag",
			body:     func(*testing.T) []byte { return bytes.Repeat([]byte{0x01, 0x02, 0x81}, 100) },
			contains: "\uFFFD",
			want:     Result{Charset: "utf-8"},
		},
		{
			name:     "an empty body is UTF-8",
			body:     func(*testing.T) []byte { return nil },
			htmlLike: true,
			want:     Result{Charset: "utf-8"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Decode(tc.body(t), tc.header, tc.htmlLike)
			if got.Charset != tc.want.Charset || got.Fallback != tc.want.Fallback || got.Warning != tc.want.Warning {
				t.Errorf("Decode = {Charset:%q Fallback:%v Warning:%q}, want {Charset:%q Fallback:%v Warning:%q}",
					got.Charset, got.Fallback, got.Warning, tc.want.Charset, tc.want.Fallback, tc.want.Warning)
			}
			if !strings.Contains(got.Text, tc.contains) {
				t.Errorf("text %q does not contain %q", trim(got.Text), tc.contains)
			}
			if tc.absent != "" && strings.Contains(got.Text, tc.absent) {
				t.Errorf("text %q contains %q", trim(got.Text), tc.absent)
			}
			if !utf8.ValidString(got.Text) {
				t.Errorf("text is not valid UTF-8")
			}
		})
	}
}

func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func TestLooksText(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00\x5c\x72\xa8\x66")
	random := make([]byte, 4096)
	x := uint32(2463534242)
	for i := range random {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		random[i] = byte(x)
	}
	tests := []struct {
		name   string
		sample []byte
		want   bool
	}{
		{"empty is text", nil, true},
		{"ASCII prose is text", []byte("hello world\nsecond line\n"), true},
		{"UTF-8 prose is text", []byte("naïve café résumé — “quotes”"), true},
		{"windows-1252 prose is text", []byte("caf\xE9 na\xEFve \x93quoted\x94"), true},
		{"PNG bytes are binary", png, false},
		{"random bytes are binary", random, false},
		{"UTF-16 (many NULs) is binary", []byte("h\x00e\x00l\x00l\x00o\x00 \x00w\x00o\x00r\x00l\x00d\x00"), false},
		{"a multi-byte character cut by the window still reads as UTF-8",
			append(bytes.Repeat([]byte("é"), sniffWindow/2-1), 0xC3, 'x'), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := LooksText(tc.sample); got != tc.want {
				t.Errorf("LooksText = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLooksTextOnlyReadsTheWindow(t *testing.T) {
	sample := append([]byte(strings.Repeat("text ", sniffWindow/5+1)), bytes.Repeat([]byte{0}, 10000)...)
	if !LooksText(sample) {
		t.Error("NUL bytes after the first 2048 bytes made the sample binary")
	}
}

func TestStartsLikeHTML(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"<!DOCTYPE html><html>", true},
		{"  \n\t<!doctype HTML>", true},
		{"\uFEFF<!doctype html>", true},
		{"\uFEFF  <html lang=en>", true},
		{"<HEAD>", true},
		{"<body>", true},
		{"<html", true},
		{"<header>not a page</header>", false},
		{"<htmlfoo>", false},
		{"<!doctype xml>", false},
		{"<?xml version=\"1.0\"?><html>", false},
		{"text <html>", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := StartsLikeHTML(tc.in); got != tc.want {
			t.Errorf("StartsLikeHTML(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestDecodeIsLinearOnLargeBodies(t *testing.T) {
	// 10 MiB of tags that all start like <meta but never declare a
	// charset, then bytes that force the windows-1252 guess.
	body := append(bytes.Repeat([]byte(`<meta name="charset" content="y">`), 10<<20/34), []byte("caf\xE9")...)
	start := time.Now()
	got := Decode(body, "", true)
	// Linear work takes well under a second (a few under the race
	// detector); a scan that restarted at every tag would take hours.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Decode of 10 MiB took %v", d)
	}
	if got.Charset != "windows-1252" {
		t.Errorf("charset %q, want windows-1252", got.Charset)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("caf\xE9"), "", true)
	f.Add([]byte(`<meta charset="Shift_JIS">\x82\xa0`), "", true)
	f.Add([]byte("\xEF\xBB\xBF<!doctype html>"), "utf-8", false)
	f.Add([]byte{0xFF, 0xFE, 'h', 0}, "x-bogus", true)
	f.Add([]byte(`<meta http-equiv=content-type content="text/html;charset='euc-jp'">`), "", true)
	f.Fuzz(func(t *testing.T, body []byte, header string, htmlLike bool) {
		got := Decode(body, header, htmlLike)
		if !utf8.ValidString(got.Text) {
			t.Fatalf("invalid UTF-8 from %q", body)
		}
		if got.Charset == "" {
			t.Fatalf("empty charset for %q", body)
		}
		if got.Warning != "" && !got.Fallback {
			t.Fatalf("a warning without the fallback flag: %+v", got)
		}
		if strings.HasPrefix(got.Text, "\uFEFF") && bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")) && !bytes.HasPrefix(body, []byte("\xEF\xBB\xBF\xEF\xBB\xBF")) {
			t.Fatalf("byte order mark kept for %q", body)
		}
		_ = LooksText(body)
		_ = StartsLikeHTML(string(body))
	})
}

func TestMetaCharsetForms(t *testing.T) {
	tests := []struct {
		page string
		want string
	}{
		{`<meta charset=shift_jis>`, "shift_jis"},
		{`<META CHARSET='EUC-JP'/>`, "EUC-JP"},
		{`<meta name="viewport" content="width=device-width"><meta charset="utf-8">`, "utf-8"},
		{`<meta http-equiv="content-type" content="text/html; charset=koi8-r"><meta charset="utf-8">`, "utf-8"},
		{`<meta content='text/html; charset="gbk"' http-equiv=Content-Type>`, "gbk"},
		{`<meta http-equiv="refresh" content="0; charset=gbk">`, ""},
		{`<meta name="charset" content="gbk">`, ""},
		{`<meta charset="`, ""},
		{`<p>no meta</p>`, ""},
	}
	for _, tc := range tests {
		if got := metaCharset([]byte(tc.page)); got != tc.want {
			t.Errorf("metaCharset(%q) = %q, want %q", tc.page, got, tc.want)
		}
	}
}
