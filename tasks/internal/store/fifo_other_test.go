//go:build !unix

package store

import "testing"

func mkfifo(t *testing.T, _ string) { t.Skip("no named pipes on this platform") }
