package git

import (
	"os/exec"
	"strings"
	"testing"
)

func TestShimTemplate(t *testing.T) {
	for _, name := range []string{"pre-commit", "pre-applypatch"} {
		s := string(Shim(name))
		if strings.Contains(s, "@HOOK@") {
			t.Fatalf("%s: placeholder left", name)
		}
		lines := strings.SplitN(s, "\n", 3)
		if lines[0] != "#!/bin/sh" || !strings.HasPrefix(lines[1], Marker) {
			t.Fatalf("%s: header %q", name, lines[:2])
		}
		if !strings.Contains(s, "hook="+name+"\n") || !strings.Contains(s, `"$here/$hook`+ChainSuffix+`"`) {
			t.Fatalf("%s: shim does not name its hook or chain suffix", name)
		}
		// The shim must parse under the shells git uses.
		for _, sh := range []string{"sh", "dash", "bash"} {
			path, err := exec.LookPath(sh)
			if err != nil {
				continue
			}
			cmd := exec.Command(path, "-n")
			cmd.Stdin = strings.NewReader(s)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s", sh, err, out)
			}
		}
	}
}
