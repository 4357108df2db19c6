//go:build !unix

package worktree

import "io/fs"

// linkCount returns 0 (unknown): the link count needs a platform call this
// build does not make.
func linkCount(fs.FileInfo) uint64 { return 0 }
