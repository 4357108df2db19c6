package store

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the document decoder: it must never
// panic, must answer with a typed Corrupt or Unsupported error or a state
// that passes the schema check, and a state it accepts must encode to a
// document that decodes to the same encoding again.
func FuzzDecode(f *testing.F) {
	golden, _ := os.ReadFile(filepath.Join("testdata", "state-v1.json"))
	f.Add(golden)
	f.Add([]byte(`{"meta":{"version":1}}`))
	f.Add([]byte(`{"meta":{"version":2}}`))
	f.Add([]byte(`{"meta":{"version":1},"jobs":{"a":null}}`))
	f.Add([]byte(`{"meta":{"version":1,"generationSeq":3},"leases":{"a":{"taskID":"a","kind":"message","token":"t","state":"held","generation":3}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decode("state.json", data)
		if err != nil {
			if k, _ := kindCode(err); k != Corrupt && k != Unsupported {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if err := st.check(); err != nil {
			t.Fatalf("accepted a state that breaks the schema: %v", err)
		}
		once, err := json.Marshal(st)
		if err != nil {
			t.Fatalf("cannot encode an accepted state: %v", err)
		}
		again, err := decode("state.json", once)
		if err != nil {
			t.Fatalf("the re-encoded state does not decode: %v\n%s", err, once)
		}
		twice, _ := json.Marshal(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n%s\n%s", once, twice)
		}
	})
}
