package rescue

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// These tests pin containment under attack: a directory swapped between the
// check and the write, a session rooted inside the git dir, oversized input,
// and rollbacks that must put back the very file that was there.

// gitRepo makes a real repository in a fresh directory and returns it.
func gitRepo(t *testing.T, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(dir, "repo")
	cmd := exec.Command("git", append([]string{"init", "-q"}, append(args, repo)...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return repo
}

// treeState records every entry below dir: its kind, mode and bytes, so a
// test can assert that a refused patch changed nothing at all.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	return out
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed: %q -> %q", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s appeared", k)
		}
	}
}

func codeOf(err error) string {
	if err == nil {
		return ""
	}
	return asError(err).Code
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The top swapped for a link to another directory after the check: the
// writes go to the directory that was checked (its handle was opened
// before the first check), never to the link's target.
func TestApplyTopSwappedForLinkDoesNotWriteThroughIt(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, out := filepath.Join(base, "repo"), filepath.Join(base, "out")
	writeFile(t, filepath.Join(repo, "f.txt"), "old\n")
	writeFile(t, filepath.Join(out, "f.txt"), "old\n")
	outBefore := treeState(t, out)
	_, err = Process([]byte(wrap("*** Update File: f.txt\n@@\n-old\n+new\n")), Options{
		Directory: repo, NoWorktree: true, Apply: true,
		afterCheck: func() {
			if err := os.Rename(repo, repo+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(out, repo); err != nil {
				t.Fatal(err)
			}
		},
	})
	sameTree(t, outBefore, treeState(t, out))
	got, _ := os.ReadFile(filepath.Join(repo+".real", "f.txt"))
	switch {
	case err == nil && string(got) != "new\n":
		t.Fatalf("applied, but the checked directory holds %q", got)
	case err != nil && string(got) != "old\n":
		t.Fatalf("refused (%v), but the checked directory holds %q", err, got)
	}
}

// A parent directory swapped for a link to .git or to a nested repository,
// after the check and before the write, is refused: the write would land
// in the git dir (here .git/config, which git executes through
// core.fsmonitor). Nothing changes and no temporary file is left.
func TestApplyParentSwappedForLinkIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string // where the link points, relative to the repository
		seam   string // afterCheck: before the read; BeforeWrite: before the write
	}{
		{"git dir before the read", ".git", "afterCheck"},
		{"git dir before the write", ".git", "beforeStep"},
		{"nested repository before the write", "nested", "beforeStep"},
		{"nested repository before the read", "nested", "afterCheck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gitRepo(t)
			writeFile(t, filepath.Join(repo, "d", "config"), "[core]\n")
			if out, err := exec.Command("git", "init", "-q", filepath.Join(repo, "nested")).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			writeFile(t, filepath.Join(repo, "nested", "config"), "[core]\n")
			gitConfig, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))
			writeFile(t, filepath.Join(repo, "nested", ".git", "config"), "[core]\n")
			swap := func() {
				if err := os.Rename(filepath.Join(repo, "d"), filepath.Join(repo, "d.real")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(tc.target, filepath.Join(repo, "d")); err != nil {
					t.Fatal(err)
				}
			}
			// The config file of .git starts "[core]" like d/config does.
			patch := wrap("*** Update File: d/config\n@@\n [core]\n+\tfsmonitor = \"touch pwned\"\n")
			opts := Options{Directory: repo, Apply: true}
			var before map[string]string
			if tc.seam == "afterCheck" {
				opts.afterCheck = func() { swap(); before = treeState(t, repo) }
			} else {
				opts.BeforeWrite = func(int) { swap(); before = treeState(t, repo) }
			}
			_, err := Process([]byte(patch), opts)
			if kindOf(err) != Blocked {
				t.Fatalf("got %v, want a blocked error", err)
			}
			if !strings.Contains(err.Error(), "apply_patch blocked: ") {
				t.Errorf("message %q lacks the blocked prefix", err)
			}
			sameTree(t, before, treeState(t, repo))
			if now, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(now) != string(gitConfig) {
				t.Errorf(".git/config written: %q", now)
			}
		})
	}
}

// A session rooted inside the git dir, in a bare repository, or in a
// worktree whose git dir GIT_DIR names elsewhere may not write the git dir:
// the resolver's git dir and common dir feed the guard on this route too.
func TestSessionInsideGitDirCannotWriteIt(t *testing.T) {
	patch := wrap("*** Update File: config\n@@\n [core]\n+\tfsmonitor = \"touch pwned\"\n")
	t.Run("root is .git", func(t *testing.T) {
		repo := gitRepo(t)
		before := treeState(t, repo)
		_, err := Process([]byte(patch), Options{Directory: filepath.Join(repo, ".git"), Apply: true})
		if codeOf(err) != CodeGitDir || kindOf(err) != Blocked {
			t.Fatalf("got %v", err)
		}
		sameTree(t, before, treeState(t, repo))
	})
	t.Run("root is .git/hooks", func(t *testing.T) {
		repo := gitRepo(t)
		before := treeState(t, repo)
		_, err := Process([]byte(wrap("*** Add File: pre-commit\n+#!/bin/sh\n+touch pwned\n")), Options{Directory: filepath.Join(repo, ".git", "hooks"), Apply: true})
		if codeOf(err) != CodeGitDir {
			t.Fatalf("got %v", err)
		}
		sameTree(t, before, treeState(t, repo))
	})
	t.Run("bare repository", func(t *testing.T) {
		repo := gitRepo(t, "--bare")
		before := treeState(t, repo)
		_, err := Process([]byte(patch), Options{Directory: repo, Apply: true})
		if codeOf(err) != CodeGitDir {
			t.Fatalf("got %v", err)
		}
		sameTree(t, before, treeState(t, repo))
	})
	t.Run("GIT_DIR outside .git", func(t *testing.T) {
		repo := gitRepo(t)
		meta := filepath.Join(repo, ".meta")
		if err := os.Rename(filepath.Join(repo, ".git"), meta); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GIT_DIR", meta)
		t.Setenv("GIT_WORK_TREE", repo)
		before := treeState(t, repo)
		_, err := Process([]byte(wrap("*** Update File: .meta/config\n@@\n [core]\n+\tfsmonitor = \"touch pwned\"\n")), Options{Directory: repo, Apply: true})
		if codeOf(err) != CodeGitDir {
			t.Fatalf("got %v", err)
		}
		sameTree(t, before, treeState(t, repo))
	})
	t.Run("host names the worktree, directory is .git", func(t *testing.T) {
		repo := gitRepo(t)
		before := treeState(t, repo)
		_, err := Process([]byte(patch), Options{Directory: filepath.Join(repo, ".git"), Worktree: repo})
		if codeOf(err) != CodeGitDir {
			t.Fatalf("got %v", err)
		}
		sameTree(t, before, treeState(t, repo))
	})
}

// A target above the size limit is refused from its size, before it is
// read: a 1 GiB sparse file costs no memory and no time.
func TestTargetAboveLimitRefusedBeforeReading(t *testing.T) {
	e := newEnv(t, map[string]string{})
	f, err := os.Create(filepath.Join(e.dir, "huge.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Skip(err)
	}
	f.Close()
	for _, apply := range []bool{false, true} {
		_, err := e.process(wrap("*** Update File: huge.txt\n@@\n-a\n+b\n"), apply)
		if kindOf(err) != Validation || codeOf(err) != CodeTooLarge || !strings.Contains(err.Error(), "128 MiB") {
			t.Fatalf("apply=%v: got %v", apply, err)
		}
	}
}

func TestPatchAboveLimitRefused(t *testing.T) {
	e := newEnv(t, map[string]string{})
	big := make([]byte, MaxPatchSize+1)
	_, err := e.process(string(big), false)
	if kindOf(err) != Validation || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("got %v", err)
	}
}

// Paths no file system here can hold get one answer on every route: a
// validation error naming the problem, whether or not the path exists.
func TestInvalidPathsAreValidationErrors(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\n"})
	long := strings.Repeat("n", 300)
	for name, path := range map[string]string{
		"component over 255 bytes": long + "/f.txt",
		"path over PATH_MAX":       strings.Repeat("d/", 2100) + "f.txt",
		"invalid UTF-8":            "caf\xe9.txt",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.process(wrap("*** Add File: "+path+"\n+x\n"), true)
			if kindOf(err) != Validation || codeOf(err) != CodeInvalidPath {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// An interrupt during apply restores every file already written.
func TestInterruptDuringApplyRollsBack(t *testing.T) {
	files := map[string]string{}
	var patch strings.Builder
	for i := 0; i < 20; i++ {
		name := filepath.Join("d", string(rune('a'+i))+".txt")
		files[name] = "old\n"
		patch.WriteString("*** Update File: " + name + "\n@@\n-old\n+new\n")
	}
	e := newEnv(t, files)
	before := treeState(t, e.dir)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := Process([]byte(wrap(patch.String())), Options{Directory: e.dir, NoWorktree: true, Apply: true, Context: ctx,
		BeforeWrite: func(i int) {
			if i == 10 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "every file was restored") {
		t.Fatalf("got %v", err)
	}
	sameTree(t, before, treeState(t, e.dir))
}

// A deadline ends the check with a blocked answer, before anything is
// read or written.
func TestDeadlineBlocksWithBudgetError(t *testing.T) {
	e := newEnv(t, map[string]string{"a.txt": "a\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err := Process([]byte(wrap("*** Update File: a.txt\n@@\n-a\n+b\n")), Options{Directory: e.dir, NoWorktree: true, Apply: true, Context: ctx})
	if kindOf(err) != Blocked || codeOf(err) != CodeBudget || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if got, _ := e.read("a.txt"); got != "a\n" {
		t.Fatalf("a.txt = %q", got)
	}
}
