// Package astgreptest finds a real ast-grep binary for tests: SLIM_AST_GREP
// when set, else the one scripts/e2e-setup.sh installs into
// e2e/node_modules/.bin. Without one a test is skipped, unless
// SLIM_E2E=require (as in CI), which makes it a failure.
package astgreptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	once sync.Once
	bin  string
	err  error
)

// Binary returns the path of a working ast-grep, or skips (fails under
// SLIM_E2E=require) the test.
func Binary(t testing.TB) string {
	t.Helper()
	once.Do(func() { bin, err = find() })
	if err != nil {
		if strings.EqualFold(strings.TrimSpace(os.Getenv("SLIM_E2E")), "require") {
			t.Fatalf("SLIM_E2E=require: %v", err)
		}
		t.Skipf("%v (run scripts/e2e-setup.sh, or set SLIM_AST_GREP; SLIM_E2E=require makes this a failure)", err)
	}
	return bin
}

// Find returns the binary Binary would use, or why there is none.
func Find() (string, error) {
	once.Do(func() { bin, err = find() })
	return bin, err
}

func find() (string, error) {
	p := os.Getenv("SLIM_AST_GREP")
	if p == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		p = filepath.Join(root, "e2e", "node_modules", ".bin", "ast-grep")
	}
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("ast-grep not installed: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ast-grep") {
		return "", fmt.Errorf("%s --version: %v: %q", p, err, out)
	}
	return p, nil
}

// repoRoot is the directory holding go.mod, from the test's working
// directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the test directory")
		}
		dir = up
	}
}
