// Package atomicfile replaces files so that a reader, or a process killed at
// any moment, sees either the old bytes or the new bytes, never a torn mix:
// write a temporary sibling, fsync it, rename it over the target, fsync the
// directory. WriteFileNoDirSync and SyncDir split off the last step, for a
// writer that holds a lock while it replaces the file and need not hold it
// for that fsync.
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
	return write(name, data, perm, fullSync)
}

// Replace is WriteFile without the fsyncs. Readers, and a writer killed at
// any moment, still see either the old or the new bytes, never a mix; only
// a power failure or an OS crash may lose the update. It is meant for small
// state that is rewritten on every call and safe to lose (the loop guard's
// session files), where two fsyncs would cost more than the whole process.
func Replace(name string, data []byte, perm os.FileMode) error {
	return write(name, data, perm, noSync)
}

// WriteFileNoDirSync is WriteFile without its last step, the fsync of the
// directory that makes the rename durable; the caller runs SyncDir(name)
// later. The new bytes are on disk before the rename, so a reader, a
// killed writer and a machine that crashes all still see the old or the
// new bytes, never a mix; only until SyncDir returns may a crash bring
// back the old file. It is for a writer that replaces the file under a
// lock and releases the lock before that fsync: it must still call
// SyncDir before it acts on the new content.
func WriteFileNoDirSync(name string, data []byte, perm os.FileMode) error {
	return write(name, data, perm, fileSync)
}

// SyncDir fsyncs the directory of name, which makes every rename already
// done over name durable. Errors are ignored: some platforms and file
// systems cannot fsync a directory, and the renames themselves already
// happened.
func SyncDir(name string) { syncDir(filepath.Dir(name)) }

// durability says which fsyncs write does.
type durability int

const (
	noSync   durability = iota // Replace: none
	fileSync                   // WriteFileNoDirSync: the temporary's
	fullSync                   // WriteFile: the temporary's and the directory's
)

func write(name string, data []byte, perm os.FileMode, d durability) (err error) {
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
	if d >= fileSync {
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
	if d == fullSync {
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
