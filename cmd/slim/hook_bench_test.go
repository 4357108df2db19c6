package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// BenchmarkHookUntouched is `slim hook before` for an exempt tool, in
// process: CLI set-up, decode, dispatch, encode.
func BenchmarkHookUntouched(b *testing.B) {
	b.Setenv("SLIM_STATE_DIR", b.TempDir())
	req := `{"v":1,"phase":"before","host":{"flavor":"v1","platform":"linux","directory":"/w"},"tool":"task","sessionID":"s","callID":"c","args":{"prompt":"look around"}}`
	for b.Loop() {
		if code := run([]string{"slim", "hook", "before"}, strings.NewReader(req), io.Discard, io.Discard); code != 0 {
			b.Fatal(code)
		}
	}
}

// BenchmarkHookReadPair is a before+after pair for read, in process.
func BenchmarkHookReadPair(b *testing.B) {
	b.Setenv("SLIM_STATE_DIR", b.TempDir())
	before := `{"v":1,"phase":"before","tool":"read","sessionID":"s","callID":"c","args":{"filePath":"src/a.go"}}`
	after := `{"v":1,"phase":"after","tool":"read","sessionID":"s","callID":"c","args":{"filePath":"src/a.go"},"output":"package a\n"}`
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if run([]string{"slim", "hook", "before"}, strings.NewReader(before), &out, io.Discard) != 0 ||
			run([]string{"slim", "hook", "after"}, strings.NewReader(after), &out, io.Discard) != 0 {
			b.Fatal(out.String())
		}
	}
}

// BenchmarkVersion is the CLI's fixed cost, for comparison.
func BenchmarkVersion(b *testing.B) {
	for b.Loop() {
		run([]string{"slim", "version"}, strings.NewReader(""), io.Discard, io.Discard)
	}
}
