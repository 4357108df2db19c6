package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestReadmeQuickStart runs the slim half of the README's set-up command
// (the rescue of the stale patch in examples/stale) from the repository
// root and compares what it prints, stderr and stdout in the order a
// terminal shows them, with the output block the README shows between its
// quick-start markers. Changing either the behaviour or the README alone
// fails this test.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	args := readmeQuickStartArgs(t, string(readme))
	want := readmeQuickStartOutput(t, string(readme))

	t.Chdir("../..")
	var out bytes.Buffer
	if code := run(append([]string{"slim"}, args...), strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("slim %s: exit %d, want 0\n%s", strings.Join(args, " "), code, out.String())
	}
	if got := out.String(); got != want {
		t.Errorf("slim %s printed\n%s\nthe README shows\n%s", strings.Join(args, " "), got, want)
	}
}

// readmeQuickStartArgs returns the arguments the set-up command passes to
// the freshly installed slim: the words after `"$(go env GOPATH)/bin/slim"`
// on the line that runs `go install`.
func readmeQuickStartArgs(t *testing.T, readme string) []string {
	t.Helper()
	const bin = `&& "$(go env GOPATH)/bin/slim" `
	for line := range strings.Lines(readme) {
		if !strings.Contains(line, "go install") {
			continue
		}
		if _, after, ok := strings.Cut(line, bin); ok {
			return strings.Fields(after)
		}
	}
	t.Fatalf("README.md has no set-up line running go install and then %s", bin)
	return nil
}

// readmeQuickStartOutput returns the body of the fenced block between the
// README's "quick-start output" marker and its "end quick-start output"
// marker.
func readmeQuickStartOutput(t *testing.T, readme string) string {
	t.Helper()
	const begin, end = "<!-- quick-start output", "<!-- end quick-start output -->"
	i := strings.Index(readme, begin)
	j := strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %q ... %q markers around the quick-start output", begin, end)
	}
	block := readme[i:j]
	block = block[strings.Index(block, "\n")+1:] // the marker line
	if !strings.HasPrefix(block, "```") {
		t.Fatalf("the quick-start marker is not followed by a fenced block:\n%s", block)
	}
	block = block[strings.Index(block, "\n")+1:] // the opening fence
	k := strings.LastIndex(block, "```")
	if k < 0 {
		t.Fatalf("the quick-start block has no closing fence:\n%s", block)
	}
	return block[:k]
}
