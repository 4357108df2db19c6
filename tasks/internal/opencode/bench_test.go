package opencode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDecodeMessages decodes a transcript of about 4 MB (2000
// messages with a 2 KB text and a tool part each), the size of a long
// session's.
func BenchmarkDecodeMessages(b *testing.B) {
	msgs := make([]map[string]any, 0, 2000)
	for i := range 2000 {
		msgs = append(msgs, map[string]any{
			"info": map[string]any{"id": fmt.Sprintf("msg_%012x", i), "role": "assistant", "time": map[string]any{"created": i, "completed": i + 1}, "finish": "stop"},
			"parts": []any{
				map[string]any{"id": "prt", "type": "text", "text": strings.Repeat("word ", 400)},
				map[string]any{"id": "prt", "type": "tool", "tool": "bash", "state": map[string]any{"status": "completed", "input": map[string]any{"command": "ls"}, "output": "a\nb"}},
			},
		})
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := decodeMessages(raw); err != nil {
			b.Fatal(err)
		}
	}
}
