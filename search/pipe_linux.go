package search

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// rgPipeBytes is the size asked for ripgrep's output pipe. The default
// (64 KiB) makes ripgrep wait, and slim wake, every 64 KiB of a large JSON
// stream; a larger pipe lets ripgrep write ahead while slim reads.
const rgPipeBytes = 1 << 20

// widenPipe asks the kernel for a larger pipe behind r when it is one; a
// refusal (a lower limit in /proc/sys/fs/pipe-max-size) leaves it as it
// was.
func widenPipe(r io.Reader) {
	f, ok := r.(*os.File)
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, rgPipeBytes) })
}
