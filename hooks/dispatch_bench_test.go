package hooks

import (
	"fmt"
	"io"
	"testing"

	"github.com/slimgate/slim/hooks/loopguard"
	"github.com/slimgate/slim/hooks/protocol"
)

// BenchmarkDispatchUntouched is the pass-through path in process: decode a
// request for an exempt tool, dispatch, encode the answer.
func BenchmarkDispatchUntouched(b *testing.B) {
	d := &Dispatcher{Loop: &loopguard.Guard{Store: loopguard.NewStore(b.TempDir(), loopguard.StoreOptions{})}}
	data := []byte(`{"v":1,"phase":"before","host":{"flavor":"v1","platform":"linux","directory":"/w","worktree":"/w","cwd":"/w"},"tool":"task","sessionID":"s","callID":"c","args":{"description":"explore","prompt":"find the config loader","subagent_type":"explorer"}}`)
	for b.Loop() {
		req, err := protocol.Decode(data)
		if err != nil || req.Validate(protocol.Before) != nil {
			b.Fatal(err)
		}
		if err := protocol.Encode(io.Discard, d.Handle(req)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDispatchReadPair is a before+after pair for read through the
// file store (before reads the record; after locks, reads and replaces
// it), in a session that already saw 1,000 calls.
func BenchmarkDispatchReadPair(b *testing.B) {
	d := &Dispatcher{Loop: &loopguard.Guard{Store: loopguard.NewStore(b.TempDir(), loopguard.StoreOptions{})}}
	pair := func(i int) {
		bef, _ := protocol.Decode(fmt.Appendf(nil, `{"v":1,"phase":"before","tool":"read","sessionID":"s","callID":"c%d","args":{"filePath":"src/f%d.go"}}`, i, i%50))
		aft, _ := protocol.Decode(fmt.Appendf(nil, `{"v":1,"phase":"after","tool":"read","sessionID":"s","callID":"c%d","args":{"filePath":"src/f%d.go"},"output":"content %d"}`, i, i%50, i))
		if r := d.Handle(bef); r.Action != protocol.Pass {
			b.Fatal(r)
		}
		d.Handle(aft)
	}
	for i := 0; i < 1000; i++ {
		pair(i)
	}
	i := 1000
	for b.Loop() {
		i++
		pair(i)
	}
}

// BenchmarkDecodeLargeOutput decodes an after request carrying a 256 KiB
// read result, the largest part of a typical request.
func BenchmarkDecodeLargeOutput(b *testing.B) {
	out := make([]byte, 256<<10)
	for i := range out {
		out[i] = 'a' + byte(i%26)
		if i%80 == 79 {
			out[i] = '\n'
		}
	}
	data := fmt.Appendf(nil, `{"v":1,"phase":"after","tool":"read","sessionID":"s","callID":"c","output":%q}`, out)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := protocol.Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
