package install

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gitshim "github.com/slimgate/slim/hooks/git"
	"github.com/slimgate/slim/hooks/opencode"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("cannot make symbolic links here:", err)
	}
}

// wantLinkRefusal checks err is the blocked symlink error naming link.
func wantLinkRefusal(t *testing.T, err error, link string) {
	t.Helper()
	var ie *Error
	if !errors.As(err, &ie) || ie.Code != CodeSymlink || !strings.Contains(ie.Message, link) {
		t.Fatalf("want a blocked symlink error naming %s, got %v", link, err)
	}
}

// empty fails unless dir holds nothing.
func empty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Fatalf("%s was written through a link: %v", dir, ents)
	}
}

func TestOpenCodeInstallNeverFollowsALinkInTheProject(t *testing.T) {
	for _, tc := range []struct {
		name string
		link string // relative to the project top
	}{
		{".opencode is a link", ".opencode"},
		{"the plugin folder is a link", filepath.Join(".opencode", "plugin")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, outside := newRepo(t), t.TempDir()
			link := filepath.Join(top, tc.link)
			symlink(t, outside, link)
			path, guard, err := OpenCodePath(top, false, os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			link = filepath.Join(guard, tc.link)
			_, err = OpenCode(path, guard)
			wantLinkRefusal(t, err, link)
			empty(t, outside)

			// The uninstall does not reach through the link either.
			theirs := filepath.Join(outside, "plugin", "slim.js")
			if tc.link != ".opencode" {
				theirs = filepath.Join(outside, "slim.js")
			}
			write(t, theirs, string(opencode.Plugin), 0o644)
			_, err = UninstallOpenCode(path, guard)
			wantLinkRefusal(t, err, link)
			if read(t, theirs) != string(opencode.Plugin) {
				t.Fatal("uninstall removed a file through the link")
			}
		})
	}
}

func TestOpenCodeInstallRefusesALinkedPluginFile(t *testing.T) {
	top, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "slim.js")
	path := filepath.Join(top, ".opencode", "plugin", "slim.js")
	symlink(t, target, path)
	_, err := OpenCode(path, top)
	wantLinkRefusal(t, err, path)
	empty(t, outside)
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
}

func TestGlobalPluginFollowsTheUsersOwnLinks(t *testing.T) {
	cfg, dotfiles := t.TempDir(), t.TempDir()
	symlink(t, dotfiles, filepath.Join(cfg, "opencode"))
	path, guard, err := OpenCodePath(t.TempDir(), true, func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return cfg
		}
		return ""
	})
	if err != nil || guard != "" {
		t.Fatalf("%s %q %v", path, guard, err)
	}
	if r, err := OpenCode(path, guard); err != nil || r.Action != Created {
		t.Fatalf("%+v %v", r, err)
	}
	if read(t, filepath.Join(dotfiles, "plugin", "slim.js")) != string(opencode.Plugin) {
		t.Fatal("the plugin is not in the linked directory")
	}
	if r, err := UninstallOpenCode(path, guard); err != nil || r.Action != Removed {
		t.Fatalf("%+v %v", r, err)
	}
	if fi, err := os.Lstat(filepath.Join(cfg, "opencode")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the uninstall removed the user's link: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dotfiles, "plugin")); !os.IsNotExist(err) {
		t.Fatalf("the emptied plugin folder was kept: %v", err)
	}
}

func TestGitInstallNeverFollowsALinkInTheRepository(t *testing.T) {
	t.Run("the hooks directory is a link", func(t *testing.T) {
		repo, outside := newRepo(t), t.TempDir()
		hooks := filepath.Join(repo, ".git", "hooks")
		if err := os.RemoveAll(hooks); err != nil {
			t.Fatal(err)
		}
		symlink(t, outside, hooks)
		dir, guard, err := GitHooksDir(repo)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Git(dir, guard)
		wantLinkRefusal(t, err, dir)
		empty(t, outside)
		write(t, filepath.Join(outside, "pre-commit"), string(gitshim.Shim("pre-commit")), 0o755)
		_, err = UninstallGit(dir, guard)
		wantLinkRefusal(t, err, dir)
		if _, err := os.Stat(filepath.Join(outside, "pre-commit")); err != nil {
			t.Fatal("uninstall removed a hook through the link")
		}
	})
	t.Run("a directory on core.hooksPath is a link", func(t *testing.T) {
		repo, outside := newRepo(t), t.TempDir()
		git(t, repo, "config", "core.hooksPath", "tools/hooks")
		symlink(t, outside, filepath.Join(repo, "tools"))
		sub := filepath.Join(repo, "sub")
		os.Mkdir(sub, 0o755)
		dir, guard, err := GitHooksDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Git(dir, guard)
		wantLinkRefusal(t, err, filepath.Join(guard, "tools"))
		empty(t, outside)
	})
	t.Run("core.hooksPath outside the repository may go through links", func(t *testing.T) {
		repo, real := newRepo(t), t.TempDir()
		mine := filepath.Join(t.TempDir(), "my-hooks")
		symlink(t, real, mine)
		git(t, repo, "config", "core.hooksPath", mine)
		dir, guard, err := GitHooksDir(repo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Git(dir, guard); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(real, "pre-commit")); err != nil {
			t.Fatal("the shim is not in the user's linked hooks directory")
		}
	})
}

func TestGitHookThatIsALinkIsMovedAsideNotWrittenThrough(t *testing.T) {
	repo, outside := newRepo(t), t.TempDir()
	theirs := filepath.Join(outside, "pre-commit")
	write(t, theirs, "#!/bin/sh\necho theirs\n", 0o755)
	dir, guard, err := GitHooksDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, theirs, filepath.Join(dir, "pre-commit"))
	results, err := Git(dir, guard)
	if err != nil || results[0].Action != Chained {
		t.Fatalf("%+v %v", results, err)
	}
	if read(t, theirs) != "#!/bin/sh\necho theirs\n" {
		t.Fatal("the link's target was written")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "pre-commit"+gitshim.ChainSuffix)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was not moved aside as a link: %v", err)
	}
	if _, err := UninstallGit(dir, guard); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "pre-commit")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was not put back: %v", err)
	}
}
