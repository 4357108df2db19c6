package hooks

import (
	"context"

	"github.com/slimgate/slim/rescue"
	"github.com/slimgate/slim/worktree/hostpath"
)

// RescuePatch is the PatchFunc backed by the rescue engine: containment of
// every target, then validation and rescue, handing on the original patch,
// a rewritten one, or a refusal. ctx bounds the work; a patch handed on
// carries the warnings `slim worktree check` prints for its targets.
func RescuePatch(ctx context.Context, patch []byte, r PatchRequest) (PatchResult, error) {
	flavor := hostpath.Native
	if r.Platform != "" {
		flavor = hostpath.ForPlatform(r.Platform)
	}
	outside := r.Outside
	if outside == "" {
		outside = rescue.OutsideBlock
	}
	res, err := rescue.Process(patch, rescue.Options{
		Directory:   r.Directory,
		Worktree:    r.Worktree,
		Flavor:      flavor,
		Outside:     outside,
		AllowNested: r.AllowNested,
		Context:     ctx,
	})
	if err != nil {
		return PatchResult{Decision: PatchBlock}, err
	}
	out := PatchResult{Decision: res.Decision}
	if res.PatchText != nil {
		out.PatchText = *res.PatchText
	}
	// A target named by two hunks gives its warning twice; one note is enough.
	seen := map[string]bool{}
	for _, w := range res.Warnings {
		if !seen[w] {
			seen[w] = true
			out.Warnings = append(out.Warnings, w)
		}
	}
	return out, nil
}
