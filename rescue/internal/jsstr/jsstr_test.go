package jsstr

import (
	"testing"
	"unicode"
)

// TestIsSpace checks the set against Go's unicode.IsSpace: within the BMP
// they differ exactly on U+FEFF (a space in JavaScript only) and U+0085
// (a space in Go only).
func TestIsSpace(t *testing.T) {
	for r := rune(0); r <= 0xFFFF; r++ {
		js, gs := IsSpace(r), unicode.IsSpace(r)
		switch r {
		case 0xFEFF:
			if !js || gs {
				t.Errorf("U+FEFF: js %v go %v", js, gs)
			}
		case 0x0085:
			if js || !gs {
				t.Errorf("U+0085: js %v go %v", js, gs)
			}
		default:
			if js != gs {
				t.Errorf("U+%04X: js %v go %v", r, js, gs)
			}
		}
	}
	if got := TrimEnd("a \t\u00A0\u3000\uFEFF\u2028"); got != "a" {
		t.Errorf("TrimEnd = %q", got)
	}
	if got := Trim("\u200B a\u0085 "); got != "\u200B a\u0085" {
		t.Errorf("Trim = %q", got)
	}
	if got := TrimStart("\uFEFF\u00A0 a "); got != "a " {
		t.Errorf("TrimStart = %q", got)
	}
}

// TestIsASCII checks the word-at-a-time test on every length and position
// of a non-ASCII byte around the eight-byte steps.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 20; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = 0x7f
		}
		if !IsASCII(string(b)) {
			t.Fatalf("%d ASCII bytes: not ASCII", n)
		}
		for i := range b {
			c := append([]byte(nil), b...)
			c[i] = 0x80
			if IsASCII(string(c)) {
				t.Fatalf("byte 0x80 at %d of %d: ASCII", i, n)
			}
		}
	}
}
