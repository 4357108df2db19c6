// Package atomicfile replaces files so that a reader, or a process killed at
// any moment, sees either the old bytes or the new bytes, never a torn mix:
// write a temporary sibling, fsync it, rename it over the target, fsync the
// directory.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFile atomically replaces name with data, created with perm when the
// file is new. The temporary file lives in the same directory, so the final
// rename never crosses a file system.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return write(name, data, perm, true)
}

// Replace is WriteFile without the fsyncs. Readers, and a writer killed at
// any moment, still see either the old or the new bytes, never a mix; only
// a power failure or an OS crash may lose the update. It is meant for small
// state that is rewritten on every call and safe to lose (the loop guard's
// session files), where two fsyncs would cost more than the whole process.
func Replace(name string, data []byte, perm os.FileMode) error {
	return write(name, data, perm, false)
}

func write(name string, data []byte, perm os.FileMode, durable bool) (err error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomic write %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("atomic write %s: %w", name, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("atomic write %s: %w", name, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("atomic write %s: sync: %w", name, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("atomic write %s: %w", name, err)
	}
	if err = os.Rename(tmp, name); err != nil {
		return fmt.Errorf("atomic write %s: %w", name, err)
	}
	if durable {
		syncDir(dir)
	}
	return nil
}

// syncDir makes a rename durable. Errors are ignored: some platforms and file
// systems cannot fsync a directory, and the rename itself already happened.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
