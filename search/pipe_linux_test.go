package search

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestWidenPipeGrowsRipgrepsPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	want := rgPipeBytes
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < want {
			t.Skipf("pipes are limited to %d bytes here", max)
		}
	}
	widenPipe(r)
	got, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil || got < want {
		t.Fatalf("pipe size %d (%v), want at least %d", got, err, want)
	}
	widenPipe(strings.NewReader("not a pipe")) // no file: nothing happens
}
