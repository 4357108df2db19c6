//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/slimgate/slim/internal/slimerr"
)

// syncChannel is the resident slim's second way in (`slim hook serve
// --sync DIR`): two FIFOs in a directory only the user can open, DIR/request
// for frames in and DIR/reply for their answers. The plugin's before hook
// writes a frame there and polls the reply without yielding to the host's
// event loop; on the resident's stdout the answer would wait until the host
// has done its other pending work, 10-30 ms a call in a busy session.
//
// Both FIFOs are opened here for reading and writing, so opening never
// waits for the other side and the request FIFO never reads as ended; the
// caller still sees this process go: its reads of DIR/reply end (no writer
// is left) and its writes to DIR/request fail (no reader is left). The
// request FIFO gets its name only once both are open, so a caller that
// finds DIR/request can open both at once. The caller may unlink both
// names once it has them open; close removes whatever is left.
// syncChannelSupported says whether this build offers --sync.
const syncChannelSupported = true

type syncChannel struct {
	dir      string
	req, rep *os.File
	mu       sync.Mutex // one reply at a time
}

// syncReplyTimeout bounds the write of one answer: a caller that stopped
// reading (it timed out and stops this resident) must not hold the server.
const syncReplyTimeout = 10 * time.Second

// openSyncChannel makes and opens the FIFOs in dir, which must be a
// directory of this user's that nobody else can open: a FIFO in a shared
// directory could be opened by another user, who could then read the
// requests or answer them.
func openSyncChannel(dir string) (*syncChannel, error) {
	fail := func(format string, args ...any) error {
		return slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve --sync: "+format, args...)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fail("%v", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return nil, fail("%s is not a directory", dir)
	}
	if int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fail("%s must be a directory of yours that only you can open (mode 0700), it is %v", dir, fi.Mode().Perm())
	}
	c := &syncChannel{dir: dir}
	open := func(name string) (*os.File, error) {
		path := filepath.Join(dir, name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			return nil, fmt.Errorf("make %s: %w", path, err)
		}
		return os.OpenFile(path, os.O_RDWR, 0)
	}
	if c.rep, err = open("reply"); err == nil {
		if c.req, err = open("request.new"); err == nil {
			err = os.Rename(filepath.Join(dir, "request.new"), filepath.Join(dir, "request"))
		}
	}
	if err != nil {
		c.close()
		return nil, slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("hook serve --sync: %w", err))
	}
	return c, nil
}

// write sends one answer line.
func (c *syncChannel) write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.rep.SetWriteDeadline(time.Now().Add(syncReplyTimeout)); err != nil && !errors.Is(err, os.ErrNoDeadline) {
		return err
	}
	_, err := c.rep.Write(b)
	return err
}

// close closes the FIFOs and removes their names and the directory, if
// the caller left them.
func (c *syncChannel) close() {
	for _, f := range []*os.File{c.req, c.rep} {
		if f != nil {
			f.Close()
		}
	}
	for _, name := range []string{"request", "request.new", "reply"} {
		os.Remove(filepath.Join(c.dir, name))
	}
	os.Remove(c.dir)
}
