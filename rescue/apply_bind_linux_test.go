//go:build linux

package rescue

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A target spelt through another path to the top (here a bind mount of
// it) is inside by file identity; apply writes it through the root at its
// place below the top, rather than refusing it as "../<alias>/...".
func TestApplyTargetSpeltThroughAlias(t *testing.T) {
	base := t.TempDir()
	top := filepath.Join(base, "top")
	alias := filepath.Join(base, "alias")
	for _, d := range []string{top, alias} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mount(top, alias, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount (needs privileges): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(alias, 0) })
	if err := os.WriteFile(filepath.Join(top, "f.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, patch, file, want string
	}{
		{"update", "*** Update File: " + filepath.Join(alias, "f.txt") + "\n@@\n-two\n+TWO\n", "f.txt", "one\nTWO\n"},
		{"add", "*** Add File: " + filepath.Join(alias, "sub", "new.txt") + "\n+new\n", "sub/new.txt", "new\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Process([]byte(wrap(tc.patch)), Options{Directory: top, NoWorktree: true, Apply: true})
			if err != nil {
				t.Fatalf("Process: %v", err)
			}
			if res.Applied == nil || !*res.Applied {
				t.Fatalf("not applied: %+v", res)
			}
			got, err := os.ReadFile(filepath.Join(top, tc.file))
			if err != nil || string(got) != tc.want {
				t.Fatalf("%s = %q, %v; want %q", tc.file, got, err, tc.want)
			}
			// Nothing was written beside the top through a "../" path.
			if ents, _ := os.ReadDir(base); len(ents) != 2 {
				t.Errorf("entries beside the top: %v", ents)
			}
		})
	}
}
