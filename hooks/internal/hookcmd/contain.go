package hookcmd

import (
	"fmt"

	"github.com/rs/zerolog"
	"github.com/slimgate/slim/worktree"
)

// WriteCheck is the containment decision on a write tool's target, for a
// host to word in its own answer format.
type WriteCheck struct {
	// Refusal, when not empty, is why the call must not run: the target is
	// outside the workspace, in .git, through a link out, or could not be
	// checked.
	Refusal string
	// Ask is true when, with passthrough, the target is outside by its
	// spelling only: the host's own permission prompt decides (Refusal
	// holds the reason to show).
	Ask bool
}

// CheckWrite decides whether tool may write input[field], resolved from
// the session directory dir. A missing or unreadable target, or a session
// directory that cannot be resolved, is refused: a write slim could not
// check never runs.
func CheckWrite(log zerolog.Logger, dir, tool string, input map[string]any, field string, allowNested, passthrough bool) WriteCheck {
	target, ok := input[field].(string)
	if !ok || target == "" {
		return WriteCheck{Refusal: fmt.Sprintf("slim could not check this %s call, so it was not run: tool_input.%s is missing or not a string", tool, field)}
	}
	g, err := worktree.NewSessionGuard(dir, "", false, worktree.Options{AllowNested: allowNested})
	if err != nil {
		log.Warn().Err(err).Str("directory", dir).Msg("containment unavailable; denying the write")
		return WriteCheck{Refusal: fmt.Sprintf("slim could not check this %s call, so it was not run: the session directory %q cannot be resolved: %v", tool, dir, err)}
	}
	v := g.Check(target)
	if v.Inside {
		return WriteCheck{}
	}
	log.Info().Str("tool", tool).Str("code", v.Code).Str("target", target).Msg("write outside the workspace")
	return WriteCheck{Refusal: g.BlockError(tool, v).Error(), Ask: passthrough && v.BySpelling}
}
