package rescue

import (
	"github.com/slimgate/slim/internal/slimerr"
)

// Process validates the patch, checks every target for containment, resolves
// every chunk against the files, and then either hands on a patch (unchanged
// or rewritten), applies it (Options.Apply), or computes a diff
// (Options.DryRunDiff). The Result is never nil; on failure its Decision is
// "block" and the error is a *slimerr.Error (validation, verification,
// blocked or internal).
func Process(patch []byte, opts Options) (*Result, error) {
	res := newResult()
	res.Decision = DecisionBlock
	return res, slimerr.New(slimerr.Internal, slimerr.CodeInternal, "apply_patch internal error: rescue engine not built yet")
}

func newResult() *Result {
	return &Result{Repairs: []Repair{}, Files: []FileReport{}, Chunks: []ChunkReport{}, NativeCheck: NativeCheck{Profile: HostProfile}}
}
