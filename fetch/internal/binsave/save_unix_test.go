//go:build unix

package binsave

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Saved files are created with mode 0600 exactly, even under a umask that
// would leave them unreadable to their owner's tools.
func TestSaveCreatesOwnerOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o277)
	p, err := Save(dir, "report.pdf", []byte("%PDF-1.7"), "pdf")
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if p != filepath.Join(dir, "report.pdf") {
		t.Fatalf("path %s", p)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
}
