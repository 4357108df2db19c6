//go:build !unix

package safefs

const openNoBlock = 0
