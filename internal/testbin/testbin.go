// Package testbin builds the slim executable the way it ships (static,
// CGO_ENABLED=0) for tests that must run the
// real binary: killed processes, parallel processes, the plugin and the
// real host. One place holds the build flags, so every such test runs what
// users run.
//
// Most tests want Shared: one build per test process, in a temporary
// directory that the package's TestMain removes through M.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// Build compiles github.com/slimgate/slim/cmd/slim into dir and returns
// the executable's path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "slim")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	cmd := exec.Command("go", "build", "-o", bin, "github.com/slimgate/slim/cmd/slim")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build cmd/slim: %w\n%s", err, out)
	}
	return bin, nil
}

var shared struct {
	mu   sync.Mutex
	dir  string
	path string
	err  error
}

// Shared returns the path of the binary, building it on the first call of
// the test process into a temporary directory; later calls reuse it. A
// failed build fails every test that asks. The directory is removed when
// the tests of the process end, if the package runs them through M.
func Shared(t testing.TB) string {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.path == "" && shared.err == nil {
		shared.dir, shared.err = os.MkdirTemp("", "slim-testbin-")
		if shared.err == nil {
			shared.path, shared.err = Build(shared.dir)
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.path
}

// TestingM is what M wraps: *testing.M, or anything else with its Run.
type TestingM interface{ Run() int }

// M wraps m so that running it also removes the directory Shared built
// into, once every test has finished. A package whose tests call Shared
// runs its tests through it:
//
//	func TestMain(m *testing.M) { os.Exit(testbin.M(m).Run()) }
//
// or passes testbin.M(m) wherever its TestMain hands m on.
func M(m TestingM) TestingM { return cleaningM{m} }

type cleaningM struct{ m TestingM }

func (c cleaningM) Run() int {
	code := c.m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
		shared.dir, shared.path = "", ""
	}
	return code
}
