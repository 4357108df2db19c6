package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// slowStartModules are modules slim must not link. Go runs the package
// initialisation of everything linked on every start, and slim starts once
// or twice per agent tool call, so each of these would cost every hook call
// what its reason says.
var slowStartModules = []struct {
	path, reason string
}{
	{"github.com/russross/blackfriday/", "the markdown engine of the CLI library's man page generator builds its tables at start-up (about 0.6 ms); third_party/urfave-cli leaves the generator out"},
	{"github.com/cpuguy83/go-md2man/", "the CLI library's man page generator, which brings blackfriday"},
	{"github.com/go-git/", "its storage packages start gcfg, encoding/gob and URL patterns (about 0.7 ms); slim reads .git files itself and uses go-git only in tests"},
	{"github.com/markusmobius/go-trafilatura", "its date parser's tables take hundreds of milliseconds of initialisation"},
}

// TestPlainBuildLinksNoSlowStartModule lists the packages a plain build of
// slim links (no build tags, whatever GOFLAGS says, since a user's `go build`
// or `go install` passes none) and fails on any package of slowStartModules.
func TestPlainBuildLinksNoSlowStartModule(t *testing.T) {
	cmd := exec.Command("go", "list", "-tags=", "-deps", "-f", "{{.ImportPath}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 50 {
		t.Fatalf("go list -deps printed only %d packages, want slim's whole dependency list:\n%s", len(pkgs), out)
	}
	for _, m := range slowStartModules {
		for _, p := range pkgs {
			if strings.HasPrefix(p, m.path) {
				t.Errorf("slim links %s: %s", p, m.reason)
				break
			}
		}
	}
}
