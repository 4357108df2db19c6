package drift

import (
	"bytes"
	"strings"
	"testing"
)

// TestBenchCase checks the benchmark inputs themselves: the drifted file
// differs from the patch's view only on context lines, and the expected
// bytes differ from the disk.
func TestBenchCase(t *testing.T) {
	for _, drifted := range []bool{false, true} {
		bc := NewBenchCase(1000, 10, drifted)
		if bytes.Equal(bc.Disk, bc.Want) {
			t.Fatal("edit changes nothing")
		}
		if got := strings.Count(bc.Patch, "\n@@\n"); got < 8 || got > 10 {
			t.Errorf("%d chunks", got)
		}
		curly := bytes.Count(bc.Disk, []byte("\u201C"))
		if drifted != (curly > 0) {
			t.Errorf("drifted=%v but %d curly quotes on disk", drifted, curly)
		}
	}
}
