package drift

import (
	"fmt"
	"math/rand/v2"
)

// BenchCase is one input of the rescue benchmarks: the file on disk, a
// patch against it at pkg/big.go, and the bytes a correct apply produces.
type BenchCase struct {
	Disk, Want []byte
	Patch      string
}

// benchLine is a line of Go-like text with quotes, so that curling them is a
// real drift; the serial keeps every line distinct.
func benchLine(i int, r *rand.Rand) string {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	return fmt.Sprintf("\tv%07d := call(\"%s\", '%c', %d) // %s", i, words[r.IntN(5)], 'a'+rune(r.IntN(26)), r.IntN(1000), words[r.IntN(5)])
}

// NewBenchCase builds a file of n lines and a patch with k chunks against
// it, the same for the same n and k. When drifted, every context line of
// every chunk gets curly quotes and trailing blanks on disk (the patch keeps
// the straight, trimmed text).
func NewBenchCase(n, k int, drifted bool) BenchCase {
	r := rand.New(rand.NewPCG(uint64(n), uint64(k)))
	view := make([]Line, n)
	for i := range view {
		view[i] = Line{Text: benchLine(i, r), EOL: "\n"}
	}
	edits := SpreadEdits(r, view, k, 3)
	patch := "*** Begin Patch\n" + UpdateHunk("pkg/big.go", view, edits, 3) + "*** End Patch\n"
	disk := Clone(view)
	if drifted {
		for _, e := range edits {
			for i := max(0, e.Start-3); i < min(n, e.Start+e.Del+3); i++ {
				if i >= e.Start && i < e.Start+e.Del {
					continue
				}
				disk[i].Text = Curl(disk[i].Text) + "  "
			}
		}
	}
	return BenchCase{Disk: Join(disk), Want: ApplyAll(disk, edits), Patch: patch}
}
