// Package statedir finds the directory where slim keeps small per-user state
// (the loop guard's session files). It lives outside every worktree and git
// directory so neither the model nor git ever sees it.
package statedir

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Env is the variable that overrides the state root.
const Env = "SLIM_STATE_DIR"

// Root returns the state root for this process: $SLIM_STATE_DIR, else
// $XDG_STATE_HOME/slim, else ~/.local/state/slim on Unix and
// os.UserCacheDir()/slim on macOS and Windows.
func Root() (string, error) {
	return RootFrom(os.Getenv, runtime.GOOS, os.UserHomeDir, os.UserCacheDir)
}

// RootFrom is Root with its inputs made explicit, so every branch can be
// tested on any OS.
func RootFrom(getenv func(string) string, goos string, home, cache func() (string, error)) (string, error) {
	if d := getenv(Env); d != "" {
		return abs(d)
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return abs(filepath.Join(d, "slim"))
	}
	switch goos {
	case "darwin", "ios", "windows":
		d, err := cache()
		if err != nil {
			return "", errors.Join(errors.New("state dir: no user cache directory (set SLIM_STATE_DIR)"), err)
		}
		return filepath.Join(d, "slim"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", errors.Join(errors.New("state dir: no home directory (set SLIM_STATE_DIR)"), err)
	}
	return filepath.Join(h, ".local", "state", "slim"), nil
}

// abs makes a configured directory absolute, so a later chdir cannot move
// the state.
func abs(p string) (string, error) {
	a, err := filepath.Abs(p)
	if err != nil {
		return "", errors.Join(errors.New("state dir: "+p), err)
	}
	return a, nil
}
