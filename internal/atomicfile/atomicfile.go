// Package atomicfile replaces files so that a reader, or a process killed at
// any moment, sees either the old bytes or the new bytes, never a torn mix:
// write a temporary sibling, fsync it, rename it over the target, fsync the
// directory.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	f, err := os.CreateTemp(dir, tempPrefix(base)+"*")
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

// tempPrefix starts the name of every temporary file written for base.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// RemoveTemps deletes the temporary files that writers of name left behind
// when they were killed between creating them and renaming them, and
// returns how many it removed. Nothing but temporary files of name is
// touched; a directory with a temporary's name is left alone. Call it only
// while holding the lock that every writer of name holds, or it may delete
// a live writer's file before its rename.
func RemoveTemps(name string) (int, error) {
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("remove temporaries of %s: %w", name, err)
	}
	n, prefix := 0, tempPrefix(base)
	var errs []error
	for _, e := range ents {
		if e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if err := errors.Join(errs...); err != nil {
		return n, fmt.Errorf("remove temporaries of %s: %w", name, err)
	}
	return n, nil
}

// syncDir makes a rename durable. Errors are ignored: some platforms and file
// systems cannot fsync a directory, and the rename itself already happened.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
