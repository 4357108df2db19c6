//go:build !unix

package main

import "io/fs"

// openNoFollow adds nothing where the system has no such flags.
const openNoFollow = 0

// permBits is false where mode bits do not say who may write a file.
const permBits = false

// fileOwner is unknown where files have no user id.
func fileOwner(fs.FileInfo) (int, bool) { return 0, false }
