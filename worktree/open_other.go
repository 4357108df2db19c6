//go:build !unix

package worktree

const openNoBlock = 0
