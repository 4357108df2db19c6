package opencode

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestPluginNode runs the plugin's own test suite (slim.test.mjs) with
// node --test, so `go test ./...` covers the JavaScript too. Without node the
// test is skipped, unless SLIM_E2E=require makes a missing node a failure.
func TestPluginNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("SLIM_E2E") == "require" {
			t.Fatalf("node not found and SLIM_E2E=require: %v", err)
		}
		t.Skip("node not found; skipping the plugin's node tests (set SLIM_E2E=require to fail instead)")
	}
	cmd := exec.Command(node, "--test", "--test-reporter=tap", "slim.test.mjs")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node --test failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "# fail 0") {
		t.Fatalf("node --test reported failures:\n%s", out.String())
	}
}

func TestPluginEmbedded(t *testing.T) {
	src, err := os.ReadFile("slim.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(src, Plugin) {
		t.Fatal("embedded plugin differs from slim.js")
	}
	if !bytes.HasPrefix(Plugin, []byte(Marker)) {
		t.Fatalf("slim.js must start with the marker %q", Marker)
	}
}
