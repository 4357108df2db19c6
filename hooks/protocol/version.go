// Package protocol defines the JSON wire protocol between the thin host
// plugin and `slim hook`: one request on stdin, one response on stdout.
package protocol

// Version is the protocol version: the "v" of every request and response,
// and the "protocol" field of `slim version --json`. The plugin turns itself
// off when the binary it finds speaks another version.
const Version = 1
