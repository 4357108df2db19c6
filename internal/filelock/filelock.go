// Package filelock takes exclusive, advisory, cross-process locks on lock
// files (gofrs/flock underneath) with a bounded wait, so a stuck peer can
// delay slim by at most the timeout and never hang a tool call.
//
// A lock file must be a regular file. The file is opened without following
// a symbolic link at its path and without blocking, so a link planted there
// never makes slim create or lock a file at the link's target, and a named
// pipe never hangs the open; both are refused with ErrNotRegular.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/gofrs/flock"
)

// ErrTimeout is returned (wrapped) when the lock was not free in time.
var ErrTimeout = errors.New("lock wait timed out")

// ErrNotRegular is returned (wrapped) when something other than a regular
// file (a symbolic link, a named pipe, a directory) is at the lock path.
var ErrNotRegular = errors.New("lock file is not a regular file")

// Lock is a held exclusive lock.
type Lock struct {
	f *flock.Flock
}

// Acquire takes an exclusive lock on path, creating the file (and its
// directory) when missing, and waits at most timeout for it (a timeout of
// 0 or less tries once). A waiter is woken as soon as the holder lets go.
// The lock is bound to the file currently at path: if another process
// removed or replaced the lock file while we waited, the lock is taken
// again on the new file, so two processes never both believe they hold it.
func Acquire(path string, timeout time.Duration) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		if err := precheck(path); err != nil {
			return nil, err
		}
		f := flock.New(path, flock.SetFlag(openFlags), flock.SetPermissions(0o600))
		ok, err := f.TryLock()
		if err == nil && !ok {
			if timeout <= 0 {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w after %v", path, ErrTimeout, timeout)
			}
			if ok, err = wait(ctx, f); !ok && err == nil {
				// Abandoned: wait closes f itself.
				return nil, fmt.Errorf("lock %s: %w after %v", path, ErrTimeout, timeout)
			}
		}
		if err != nil || !ok {
			f.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("lock %s: %w after %v", path, ErrTimeout, timeout)
			}
			if nerr := notRegular(path); nerr != nil {
				return nil, nerr
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, herr := f.Stat()
		if herr == nil && !held.Mode().IsRegular() {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w (%s)", path, ErrNotRegular, kind(held.Mode()))
		}
		now, nerr := os.Lstat(path)
		if herr == nil && nerr == nil && os.SameFile(held, now) {
			return &Lock{f: f}, nil
		}
		// The file we locked is no longer the one at path: retry.
		f.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("lock %s: %w after %v", path, ErrTimeout, timeout)
		}
	}
}

// wait blocks until f is locked or ctx ends. The kernel wakes a blocked
// waiter the moment the holder lets go, where polling would leave the lock
// idle between polls and let a holder that asks again at once win every
// time. The blocking call runs in its own goroutine. When ctx ends first,
// wait returns (false, nil) and leaves that goroutine to finish: it
// releases the lock as soon as it gets it and closes f, so an abandoned
// wait never keeps the lock; the caller must not touch f again.
func wait(ctx context.Context, f *flock.Flock) (bool, error) {
	done := make(chan error, 1)
	go func() { done <- f.Lock() }()
	select {
	case err := <-done:
		return err == nil, err
	case <-ctx.Done():
		go func() {
			<-done
			f.Close()
		}()
		return false, nil
	}
}

// notRegular returns an ErrNotRegular error when something other than a
// regular file is at path (after an open that refused to follow it), else
// nil.
func notRegular(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("lock %s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
}

// kind names the type of a file that is not a regular one, for messages.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.Type().String()
}

// Unlock releases the lock. The lock file stays, so waiting peers keep
// locking the same file.
func (l *Lock) Unlock() error {
	if err := l.f.Unlock(); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Path(), err)
	}
	return nil
}

// RemoveAndUnlock deletes the lock file while still holding the lock, then
// releases it. Peers that were waiting on the old file notice the change in
// Acquire and lock the new file instead. On Windows an open file cannot be
// deleted, so the (empty) lock file stays and is only unlocked.
func (l *Lock) RemoveAndUnlock() error {
	if runtime.GOOS == "windows" {
		return l.Unlock()
	}
	rerr := os.Remove(l.f.Path())
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	return errors.Join(rerr, l.Unlock())
}
