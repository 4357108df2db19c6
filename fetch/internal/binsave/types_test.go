package binsave

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// The binary types are image/*, audio/*, video/* (svg included), pdf, zip
// and octet-stream, whatever the case and parameters; their kinds are
// image, audio, video, pdf and binary; text types are not binary.
func TestKindSortsBinaryTypes(t *testing.T) {
	cases := []struct{ ct, kind string }{
		{"image/png", "image"},
		{"IMAGE/JPEG; q=1", "image"},
		{"image/svg+xml", "image"},
		{"audio/mpeg", "audio"},
		{"video/mp4", "video"},
		{"application/pdf", "pdf"},
		{" Application/PDF ; x", "pdf"},
		{"application/zip", "binary"},
		{"application/octet-stream", "binary"},
		{"application/pdfx", ""},
		{"application/zip-archive", ""},
		{"text/html; charset=utf-8", ""},
		{"text/plain", ""},
		{"application/json", ""},
		{"", ""},
		{"image", ""},
	}
	for _, c := range cases {
		if got := Kind(c.ct); got != c.kind {
			t.Errorf("Kind(%q) = %q, want %q", c.ct, got, c.kind)
		}
		if got := IsBinaryType(c.ct); got != (c.kind != "") {
			t.Errorf("IsBinaryType(%q) = %v", c.ct, got)
		}
	}
}

func gz() []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte("hello"))
	w.Close()
	return b.Bytes()
}

func tarHeader() []byte {
	b := make([]byte, 512)
	copy(b, "file.txt")
	copy(b[257:], "ustar\x0000")
	return b
}

// A known declared type decides the extension; octet-stream, no type and
// unknown types are decided by the magic bytes; a +json or +xml suffix
// names its syntax; anything else is bin.
func TestExtensionFromTypeThenMagic(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	cases := []struct {
		ct    string
		sniff []byte
		want  string
	}{
		{"application/pdf", nil, "pdf"},
		{"image/png", nil, "png"},
		{"image/jpeg", png, "jpg"},
		{"image/gif", nil, "gif"},
		{"image/webp", nil, "webp"},
		{"image/svg+xml", nil, "svg"},
		{"audio/mpeg", nil, "mp3"},
		{"audio/wav", nil, "wav"},
		{"audio/ogg", nil, "ogg"},
		{"video/mp4", nil, "mp4"},
		{"video/webm", nil, "webm"},
		{"application/zip", nil, "zip"},
		{"application/gzip", nil, "gz"},
		{"application/x-tar", nil, "tar"},
		{"application/json", nil, "json"},
		{"application/octet-stream", png, "png"},
		{"application/octet-stream", []byte("%PDF-1.7\n"), "pdf"},
		{"application/octet-stream", gz(), "gz"},
		{"application/octet-stream", tarHeader(), "tar"},
		{"application/octet-stream", []byte("BZh91AY&SY"), "bz2"},
		{"application/octet-stream", []byte("\xfd7zXZ\x00\x00"), "xz"},
		{"application/octet-stream", []byte("\x28\xb5\x2f\xfd\x00"), "zst"},
		{"application/octet-stream", []byte("7z\xbc\xaf\x27\x1c\x00"), "7z"},
		{"application/octet-stream", []byte("GIF89a\x01\x00"), "gif"},
		{"application/octet-stream", []byte{0x00, 0x01, 0x02, 0xff}, "bin"},
		{"application/octet-stream", nil, "bin"},
		{"", png, "png"},
		{"image/x-unknown", png, "png"},
		{"image/x-unknown", []byte{0, 1, 2}, "bin"},
		{"application/vnd.api+json", nil, "json"},
		{"application/atom+xml", nil, "xml"},
		{"application/x-whatever", nil, "bin"},
	}
	for _, c := range cases {
		if got := Extension(c.ct, c.sniff); got != c.want {
			t.Errorf("Extension(%q, % x) = %q, want %q", c.ct, c.sniff[:min(len(c.sniff), 8)], got, c.want)
		}
	}
}
