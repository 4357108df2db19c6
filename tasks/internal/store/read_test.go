package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/slimgate/slim/internal/statedir"
)

func TestReadDocumentReadsTheWholeFile(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 100_000} {
		p := filepath.Join(dir, "doc")
		want := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readDocument(p, 1<<20)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
	}
}

func TestReadDocumentRefusesWhatStatedirRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("{}"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 100), 0o600)
	for _, c := range []struct {
		name, path string
		want       error
	}{
		{"missing", filepath.Join(dir, "missing"), fs.ErrNotExist},
		{"a symbolic link", link, statedir.ErrNotRegular},
		{"a directory", sub, statedir.ErrNotRegular},
		{"over the bound", big, statedir.ErrTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := readDocument(c.path, 99); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

// TestReadDocumentAllocatesTheDocumentOnce: a buffer grown while reading
// would allocate the size two or three times over, enough on a large
// document to start a garbage collection inside the transaction.
func TestReadDocumentAllocatesTheDocumentOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "doc")
	const size = 1 << 20
	if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	data, err := readDocument(p, 2*size)
	runtime.ReadMemStats(&after)
	if err != nil || len(data) != size {
		t.Fatalf("read %d bytes, %v", len(data), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > size+size/4 {
		t.Fatalf("reading %d bytes allocated %d", size, got)
	}
}
