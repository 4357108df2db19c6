package binsave

import (
	"mime"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds of a sanitized name. The byte bound keeps a name of multi-byte
// characters under the 255-byte limit of common file systems, with room
// for a "-999" collision suffix.
const (
	MaxNameRunes = 180
	MaxNameBytes = 240
)

// The fallbacks: a name that sanitizes to nothing, and the name of a
// download that offers none.
const (
	EmptyName      = "download"
	fallbackPrefix = "webfetch-"
)

// FallbackName is the name of a download that has none of its own:
// webfetch-<unix milliseconds>.<ext>.
func FallbackName(t time.Time, ext string) string {
	name := fallbackPrefix + strconv.FormatInt(t.UnixMilli(), 10)
	if ext != "" {
		name += "." + ext
	}
	return name
}

// The expressions are compiled on first use: slim runs on every tool call,
// and package initialisation is paid by every run, fetch or not.
var (
	extFilenameRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(?:^|;)\s*filename\*\s*=\s*("?)([^;"]*)("?)`) })
	plainFilenameRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)(?:^|;)\s*filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))`)
	})
	backslashRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\\(.)`) })
)

// Filename is the sanitized name a download offers, or "" when it offers
// none. In order:
//   - Content-Disposition filename*= (RFC 5987: charset'language'value,
//     percent-decoded; UTF-8, US-ASCII and ISO-8859-1 are understood);
//   - Content-Disposition filename=, quoted or bare. mime.ParseMediaType
//     reads well-formed headers; a header it rejects (an unquoted
//     "filename=report final.pdf", a missing disposition type) is read by a
//     looser pattern instead;
//   - the last non-empty segment of the URL path, percent-decoded, when it
//     has an extension (a dot with something after it that survives
//     sanitizing).
func Filename(contentDisposition string, u *url.URL) string {
	if name := dispositionName(contentDisposition); name != "" {
		return Sanitize(name)
	}
	if u == nil {
		return ""
	}
	segs := strings.Split(u.EscapedPath(), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i] == "" {
			continue
		}
		seg, err := url.PathUnescape(segs[i])
		if err != nil {
			seg = segs[i]
		}
		if !strings.Contains(seg, ".") {
			return ""
		}
		name := Sanitize(seg)
		if !strings.Contains(name, ".") {
			return ""
		}
		return name
	}
	return ""
}

// dispositionName is the raw (unsanitized) file name of a
// Content-Disposition value, or "".
func dispositionName(cd string) string {
	if strings.TrimSpace(cd) == "" {
		return ""
	}
	if m := extFilenameRe().FindStringSubmatch(cd); m != nil {
		if name := decodeExtValue(strings.TrimSpace(m[2])); name != "" {
			return name
		}
	}
	if _, params, err := mime.ParseMediaType(cd); err == nil {
		// ParseMediaType also decodes filename*, but only in UTF-8; the
		// pattern above has already taken every form it reads.
		if name := params["filename"]; strings.TrimSpace(name) != "" {
			return name
		}
		return ""
	}
	m := plainFilenameRe().FindStringSubmatch(cd)
	if m == nil {
		return ""
	}
	if m[1] != "" {
		return backslashRe().ReplaceAllString(m[1], "$1")
	}
	return strings.TrimSpace(m[2])
}

// decodeExtValue decodes an RFC 5987 ext-value, charset'language'pct-text.
// Undecodable values give "".
func decodeExtValue(v string) string {
	parts := strings.SplitN(v, "'", 3)
	if len(parts) != 3 {
		return ""
	}
	raw, err := url.PathUnescape(parts[2])
	if err != nil {
		return ""
	}
	switch strings.ToLower(strings.TrimSpace(parts[0])) {
	case "utf-8", "utf8", "us-ascii", "":
		return strings.ToValidUTF8(raw, "_")
	case "iso-8859-1", "latin1", "latin-1":
		var b strings.Builder
		for i := 0; i < len(raw); i++ {
			b.WriteRune(rune(raw[i]))
		}
		return b.String()
	}
	return ""
}

// reserved are the characters no file name may hold on some system.
const reserved = `<>:"/\|?*`

// isBidiControl reports the bidirectional controls that can make "evil\u202Efdp.exe"
// display as "evilexe.pdf"; they are replaced like control characters.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F,
		r >= 0x202A && r <= 0x202E,
		r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Sanitize makes name safe as one file name on Windows, macOS and Linux:
//   - invalid UTF-8, control characters, bidirectional controls and
//     < > : " / \ | ? * become "_";
//   - runs of whitespace become one space;
//   - leading and trailing spaces and dots are stripped;
//   - an empty result becomes "download";
//   - a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9, the
//     superscript COM¹²³ and LPT¹²³ forms, CONIN$, CONOUT$; any case, with
//     or without an extension) gets a "_" prefix;
//   - the result is cut to 180 characters (runes) and 240 bytes, keeping
//     the extension, and stays valid UTF-8.
//
// Sanitize is idempotent.
func Sanitize(name string) string {
	name = strings.ToValidUTF8(name, "_")
	var b strings.Builder
	b.Grow(len(name))
	space := false
	for _, r := range name {
		switch {
		case unicode.IsControl(r) || isBidiControl(r) || strings.ContainsRune(reserved, r):
			b.WriteByte('_')
			space = false
		case unicode.IsSpace(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
		default:
			b.WriteRune(r)
			space = false
		}
	}
	s := strings.Trim(b.String(), " .")
	if s == "" {
		return EmptyName
	}
	if isDeviceName(s) {
		s = "_" + s
	}
	stem, ext := nameParts(s)
	return fit(stem, ext, MaxNameRunes, MaxNameBytes)
}

// isDeviceName reports whether Windows reads s as a device: its part
// before the first dot, without trailing spaces, is a device name.
func isDeviceName(s string) bool {
	stem := s
	if i := strings.IndexByte(stem, '.'); i >= 0 {
		stem = stem[:i]
	}
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if rest, ok := strings.CutPrefix(stem, "COM"); ok {
		return isDeviceDigit(rest)
	}
	if rest, ok := strings.CutPrefix(stem, "LPT"); ok {
		return isDeviceDigit(rest)
	}
	return false
}

func isDeviceDigit(s string) bool {
	switch s {
	case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
		return true
	}
	return false
}

// maxExtRunes bounds what counts as an extension: a longer "extension" is
// just part of the name, and is cut like the rest of it.
const maxExtRunes = 16

// nameParts splits name into stem and extension (with its dot) at the
// last dot. A name with no dot, only a leading one, or an extension longer
// than maxExtRunes has no extension.
func nameParts(name string) (stem, ext string) {
	i := strings.LastIndexByte(name, '.')
	if i <= 0 || utf8.RuneCountInString(name[i:]) > maxExtRunes {
		return name, ""
	}
	return name[:i], name[i:]
}

// fit returns stem+tail cut to at most maxRunes runes and maxBytes bytes
// by shortening the stem; tail (an extension, perhaps after a collision
// suffix) is kept whole. A shortened stem loses trailing spaces and dots,
// so the result keeps Sanitize's shape.
func fit(stem, tail string, maxRunes, maxBytes int) string {
	if utf8.RuneCountInString(stem)+utf8.RuneCountInString(tail) <= maxRunes && len(stem)+len(tail) <= maxBytes {
		return stem + tail
	}
	roomRunes := maxRunes - utf8.RuneCountInString(tail)
	roomBytes := maxBytes - len(tail)
	n, end := 0, 0
	for end < len(stem) {
		_, w := utf8.DecodeRuneInString(stem[end:])
		if n+1 > roomRunes || end+w > roomBytes {
			break
		}
		n, end = n+1, end+w
	}
	cut := strings.TrimRight(stem[:end], " .")
	if cut == "" {
		cut = "_"
	}
	return cut + tail
}
