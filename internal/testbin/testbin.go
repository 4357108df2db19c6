// Package testbin builds the slim executable the way it ships (static,
// CGO_ENABLED=0, the urfave_cli_no_docs tag) for tests that must run the
// real binary: killed processes, parallel processes, the plugin and the
// real host. One place holds the build flags, so every such test runs what
// users run.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Build compiles github.com/slimgate/slim/cmd/slim into dir and returns
// the executable's path. Callers that need it more than once cache the
// result (for example with sync.Once).
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "slim")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, "github.com/slimgate/slim/cmd/slim")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build cmd/slim: %w\n%s", err, out)
	}
	return bin, nil
}
