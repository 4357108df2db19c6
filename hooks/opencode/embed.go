// Package opencode carries the thin OpenCode plugin (slim.js) so that
// `slim hooks install --opencode` can write it without any file beside the
// binary. The plugin itself is JavaScript; its tests run with node --test.
package opencode

import _ "embed"

// Plugin is the source of slim.js, byte for byte.
//
//go:embed slim.js
var Plugin []byte

// Marker starts the first line of every plugin file slim writes. The
// installer recognises its own files (and older versions of them) by it and
// never overwrites a file that lacks it.
const Marker = "// slim-managed: "
