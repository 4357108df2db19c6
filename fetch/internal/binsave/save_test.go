package binsave

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func save(t *testing.T, dir, name string, body []byte, ext string) string {
	t.Helper()
	p, err := Save(dir, name, body, ext)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("%s holds %q (%v), want %q", p, got, err, body)
	}
	return p
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A taken name gets -1, -2, ... before the extension; a name with no
// extension gets the MIME-derived one from -1 on; an earlier download is
// never overwritten.
func TestSaveNumbersCollisions(t *testing.T) {
	dir := t.TempDir()
	for i, want := range []string{"naïve résumé.pdf", "naïve résumé-1.pdf", "naïve résumé-2.pdf"} {
		p := save(t, dir, "naïve résumé.pdf", []byte("body "+strconv.Itoa(i)), "pdf")
		if filepath.Base(p) != want {
			t.Fatalf("save %d: %s, want %s", i, filepath.Base(p), want)
		}
	}
	for i, want := range []string{"download", "download-1.png", "download-2.png"} {
		p := save(t, dir, "download", []byte("img "+strconv.Itoa(i)), "png")
		if filepath.Base(p) != want {
			t.Fatalf("no extension %d: %s, want %s", i, filepath.Base(p), want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "naïve résumé.pdf")); string(b) != "body 0" {
		t.Fatalf("first file overwritten: %q", b)
	}
	if p := save(t, dir, "archive.tar.gz", []byte("a"), "gz"); filepath.Base(p) != "archive.tar.gz" {
		t.Fatal(p)
	}
	if p := save(t, dir, "archive.tar.gz", []byte("b"), "gz"); filepath.Base(p) != "archive.tar-1.gz" {
		t.Fatal(p)
	}
}

// Saving bytes that a taken name already holds returns that file instead
// of writing a copy, at whatever number it sits; the same size with other
// bytes is not a match.
func TestSaveReusesAFileWithIdenticalBytes(t *testing.T) {
	dir := t.TempDir()
	a, b, c := []byte("AAAA"), []byte("BBBB"), bytes.Repeat([]byte("C"), 200<<10)
	pa := save(t, dir, "x.pdf", a, "pdf")
	pb := save(t, dir, "x.pdf", b, "pdf")
	pc := save(t, dir, "x.pdf", c, "pdf")
	if filepath.Base(pb) != "x-1.pdf" || filepath.Base(pc) != "x-2.pdf" {
		t.Fatalf("%s %s", pb, pc)
	}
	for _, tc := range []struct {
		body []byte
		want string
	}{{a, pa}, {b, pb}, {c, pc}, {a, pa}} {
		if got := save(t, dir, "x.pdf", tc.body, "pdf"); got != tc.want {
			t.Fatalf("repeat save of %q... went to %s, want %s", tc.body[:4], got, tc.want)
		}
	}
	c2 := bytes.Clone(c)
	c2[len(c2)-1] = 'D'
	if p := save(t, dir, "x.pdf", c2, "pdf"); filepath.Base(p) != "x-3.pdf" {
		t.Fatalf("same size, other bytes: %s", p)
	}
	if n := len(entries(t, dir)); n != 4 {
		t.Fatalf("%d files: %v", n, entries(t, dir))
	}
}

// A link planted under the name is neither written through nor taken as
// the saved file, even when its target holds the same bytes.
func TestSaveNeverFollowsAPlantedLink(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "d")
	os.Mkdir(dir, 0o700)
	outside := filepath.Join(base, "outside.pdf")
	body := []byte("same bytes")
	os.WriteFile(outside, body, 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "x.pdf")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink(filepath.Join(base, "new.pdf"), filepath.Join(dir, "y.pdf")); err != nil {
		t.Fatal(err)
	}
	if p := save(t, dir, "x.pdf", body, "pdf"); filepath.Base(p) != "x-1.pdf" {
		t.Fatalf("took the link: %s", p)
	}
	// A link to a file inside the directory is not a saved file either.
	os.WriteFile(filepath.Join(dir, "real.pdf"), []byte("inside"), 0o600)
	if err := os.Symlink("real.pdf", filepath.Join(dir, "z.pdf")); err != nil {
		t.Fatal(err)
	}
	if p := save(t, dir, "z.pdf", []byte("inside"), "pdf"); filepath.Base(p) != "z-1.pdf" {
		t.Fatalf("took the inside link: %s", p)
	}
	if p := save(t, dir, "y.pdf", []byte("new"), "pdf"); filepath.Base(p) != "y-1.pdf" {
		t.Fatalf("wrote through the dangling link: %s", p)
	}
	if _, err := os.Lstat(filepath.Join(base, "new.pdf")); err == nil {
		t.Fatal("a file appeared at the dangling link's target")
	}
}

// After the name and name-1 ... name-999 are all taken by other bytes,
// Save gives up with the fixed message.
func TestSaveGivesUpAfterAThousandNames(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.bin"), []byte("taken"), 0o600)
	for i := 1; i < MaxAttempts; i++ {
		os.WriteFile(filepath.Join(dir, "f-"+strconv.Itoa(i)+".bin"), []byte("taken"), 0o600)
	}
	_, err := Save(dir, "f.bin", []byte("new"), "bin")
	e, ok := AsError(err)
	if !ok || e.Code != CodeNoFreeName || e.Message != "Unable to allocate unique filename for binary content" {
		t.Fatalf("got %v", err)
	}
	os.Remove(filepath.Join(dir, "f-999.bin"))
	if p := save(t, dir, "f.bin", []byte("new"), "bin"); filepath.Base(p) != "f-999.bin" {
		t.Fatalf("last free name: %s", p)
	}
}

// The name is sanitized inside Save too, so a separator cannot leave the
// directory; an empty name becomes webfetch-<ms>.<ext>; numbered names of
// a long name stay within 180 runes and keep the extension; a bad MIME
// extension is not used.
func TestSaveKeepsNamesInsideAndBounded(t *testing.T) {
	dir := t.TempDir()
	if p := save(t, dir, "../../evil.pdf", []byte("e"), "pdf"); filepath.Dir(p) != dir || filepath.Base(p) != "_.._evil.pdf" {
		t.Fatalf("escaped: %s", p)
	}
	if p := save(t, dir, "", []byte("\xff\xd8\xff"), "jpg"); !regexp.MustCompile(`^webfetch-\d+\.jpg$`).MatchString(filepath.Base(p)) {
		t.Fatalf("fallback name: %s", p)
	}
	long := strings.Repeat("ü", 170) + ".pdf"
	save(t, dir, long, []byte("1"), "pdf")
	p := save(t, dir, long, []byte("2"), "pdf")
	if n := utf8.RuneCountInString(filepath.Base(p)); n > MaxNameRunes || !strings.HasSuffix(p, "-1.pdf") {
		t.Fatalf("numbered long name: %d runes, %s", n, filepath.Base(p))
	}
	save(t, dir, "plain", []byte("1"), "../x")
	if p := save(t, dir, "plain", []byte("2"), "../x"); filepath.Base(p) != "plain-1" {
		t.Fatalf("bad MIME extension used: %s", p)
	}
}
