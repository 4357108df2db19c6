//go:build !unix

package main

import (
	"os"

	"github.com/slimgate/slim/internal/slimerr"
)

// syncChannel needs FIFOs, which this system does not have: `slim hook
// serve --sync` is refused, and the plugin (which offers it only where
// slim's version answer lists "serve-sync") keeps to stdin and stdout.
// syncChannelSupported says whether this build offers --sync.
const syncChannelSupported = false

type syncChannel struct{ req *os.File }

func openSyncChannel(string) (*syncChannel, error) {
	return nil, slimerr.New(slimerr.Usage, slimerr.CodeUsage, "hook serve --sync: this system has no FIFOs")
}

func (c *syncChannel) write([]byte) error { return nil }

func (c *syncChannel) close() {}
