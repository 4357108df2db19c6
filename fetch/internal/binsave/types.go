// Package binsave decides what a binary download is and saves it safely:
// the kind and file extension of a media type, a file name taken from
// Content-Disposition or the URL and made safe for every file system, a
// private per-user directory, and exclusive creation that never overwrites
// an earlier download.
package binsave

import (
	"net/http"
	"strings"
	"sync"
)

// essence is the media type without parameters, trimmed and lower-cased.
// It does not need mime.ParseMediaType to succeed: a malformed parameter
// must not hide the type.
func essence(contentType string) string {
	t := contentType
	if i := strings.IndexByte(t, ';'); i >= 0 {
		t = t[:i]
	}
	return strings.ToLower(strings.TrimSpace(t))
}

// IsBinaryType reports whether a response of this Content-Type is handled
// as a download rather than as text: any image/*, audio/* or video/* type
// (image/svg+xml included), application/pdf, application/zip and
// application/octet-stream. Matching ignores case and parameters.
func IsBinaryType(contentType string) bool {
	return Kind(contentType) != ""
}

// Kind is the download kind of a Content-Type: "image", "audio", "video",
// "pdf", or "binary" for the other binary types (zip and octet-stream); ""
// for a type that is not binary (see IsBinaryType).
func Kind(contentType string) string {
	t := essence(contentType)
	switch {
	case strings.HasPrefix(t, "image/"):
		return "image"
	case strings.HasPrefix(t, "audio/"):
		return "audio"
	case strings.HasPrefix(t, "video/"):
		return "video"
	case t == "application/pdf":
		return "pdf"
	case t == "application/zip", t == "application/octet-stream":
		return "binary"
	}
	return ""
}

// extensions maps a media type to the extension a saved file gets. It is
// built on first use, not at start-up: most runs save no download.
var extensions = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"application/pdf":               "pdf",
		"application/zip":               "zip",
		"application/x-zip-compressed":  "zip",
		"application/gzip":              "gz",
		"application/x-gzip":            "gz",
		"application/x-tar":             "tar",
		"application/x-bzip2":           "bz2",
		"application/x-xz":              "xz",
		"application/zstd":              "zst",
		"application/x-7z-compressed":   "7z",
		"application/vnd.rar":           "rar",
		"application/x-rar-compressed":  "rar",
		"application/json":              "json",
		"application/xml":               "xml",
		"application/wasm":              "wasm",
		"application/ogg":               "ogg",
		"application/postscript":        "ps",
		"application/epub+zip":          "epub",
		"application/vnd.ms-fontobject": "eot",
		"application/msword":            "doc",
		"application/vnd.ms-excel":      "xls",
		"application/vnd.ms-powerpoint": "ppt",
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   "docx",
		"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         "xlsx",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
		"image/png":                "png",
		"image/jpeg":               "jpg",
		"image/pjpeg":              "jpg",
		"image/gif":                "gif",
		"image/webp":               "webp",
		"image/svg+xml":            "svg",
		"image/avif":               "avif",
		"image/heic":               "heic",
		"image/heif":               "heif",
		"image/bmp":                "bmp",
		"image/tiff":               "tiff",
		"image/x-icon":             "ico",
		"image/vnd.microsoft.icon": "ico",
		"audio/mpeg":               "mp3",
		"audio/mp3":                "mp3",
		"audio/mp4":                "m4a",
		"audio/aac":                "aac",
		"audio/ogg":                "ogg",
		"audio/opus":               "opus",
		"audio/flac":               "flac",
		"audio/wav":                "wav",
		"audio/wave":               "wav",
		"audio/x-wav":              "wav",
		"audio/webm":               "weba",
		"audio/aiff":               "aiff",
		"audio/midi":               "mid",
		"video/mp4":                "mp4",
		"video/webm":               "webm",
		"video/ogg":                "ogv",
		"video/quicktime":          "mov",
		"video/avi":                "avi",
		"video/x-msvideo":          "avi",
		"video/mpeg":               "mpeg",
		"video/x-matroska":         "mkv",
		"font/woff":                "woff",
		"font/woff2":               "woff2",
		"font/ttf":                 "ttf",
		"font/otf":                 "otf",
		"font/collection":          "ttc",
		"text/plain":               "txt",
		"text/html":                "html",
		"text/csv":                 "csv",
		"text/markdown":            "md",
	}
})

// Extension is the extension (without the dot) for a download of
// contentType whose first bytes are sniff. A known declared type decides;
// application/octet-stream, an absent type and an unknown type are
// decided by the magic bytes (http.DetectContentType, plus tar, bzip2, xz,
// zstd and 7z, which it does not know); a structured-syntax suffix such as
// +json or +xml gives that extension; anything else is "bin".
func Extension(contentType string, sniff []byte) string {
	t := essence(contentType)
	if ext, ok := extensions()[t]; ok {
		return ext
	}
	if ext := sniffExtension(sniff); ext != "" {
		return ext
	}
	if i := strings.LastIndexByte(t, '+'); i >= 0 && strings.Contains(t, "/") {
		switch suffix := t[i+1:]; suffix {
		case "json", "xml", "zip":
			return suffix
		}
	}
	return "bin"
}

// sniffExtension is the extension the magic bytes show, or "".
func sniffExtension(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	switch {
	case len(b) >= 262 && string(b[257:262]) == "ustar":
		return "tar"
	case strings.HasPrefix(string(b), "BZh") && len(b) >= 4 && b[3] >= '1' && b[3] <= '9':
		return "bz2"
	case strings.HasPrefix(string(b), "\xfd7zXZ\x00"):
		return "xz"
	case strings.HasPrefix(string(b), "\x28\xb5\x2f\xfd"):
		return "zst"
	case strings.HasPrefix(string(b), "7z\xbc\xaf\x27\x1c"):
		return "7z"
	}
	t := essence(http.DetectContentType(b))
	if t == "application/octet-stream" {
		return ""
	}
	return extensions()[t]
}
