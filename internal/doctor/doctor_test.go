package doctor

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestWithNothingOnPathEveryProgramIsMissingWithAnInstallHint(t *testing.T) {
	start := time.Now()
	r := Run(context.Background(), Options{Dir: t.TempDir(), PathList: t.TempDir(), SlimVersion: "v1.2.3"})
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("doctor took %s", d)
	}
	names := []string{}
	for _, p := range r.Programs {
		names = append(names, p.Name)
		if p.Found || p.Install == "" || p.Error == "" {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if strings.Join(names, " ") != "git rg ast-grep node opencode" {
		t.Fatalf("programs %v", names)
	}
	text := r.Text()
	for _, want := range []string{"slim v1.2.3", "apt-get install ripgrep", "npm install -g @ast-grep/cli", "npm install -g opencode-ai", "git hooks"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report does not say %q:\n%s", want, text)
		}
	}
}
