package worktree

import "path/filepath"

// Resolve resolves dir to its worktree. Never runs git.
func Resolve(dir string) (*Info, error) {
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	return &Info{Directory: d, Kind: KindNone}, nil
}
