package hooks

import (
	"github.com/slimgate/slim/hooks/protocol"
	"github.com/slimgate/slim/search"
)

// SearchPrecheck is the SearchFunc backed by the search package: the
// grep/glob path is resolved as the host will resolve it, a stale absolute
// path is re-anchored on the workspace, and a missing or invalid path
// blocks the call.
func SearchPrecheck(tool string, args map[string]any, h protocol.Host) (SearchOutcome, error) {
	out, err := search.Precheck(tool, args, search.Host{
		Generation: h.Generation,
		Platform:   h.Platform,
		Directory:  h.Directory,
		Cwd:        h.Cwd,
	})
	return SearchOutcome{Args: out.Args, Block: out.Block}, err
}
