package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/slimgate/slim/worktree"
)

// maxUserConfigBytes bounds how much of the user configuration file is
// read: it holds a few settings, so a larger file is refused, not cut.
const maxUserConfigBytes = 64 << 10

// userConfig is slim's user configuration file, JSON:
//
//	{"fetch": {"allowPrivate": true, "allowLinkLocal": false,
//	           "models": ["provider/model", "provider/model#variant"]}}
//
// It is read only by the commands that use it (slim fetch), each time one
// runs, never by the hook. A key slim does not know is refused, so that a
// misspelt switch cannot silently leave an address class closed or open.
// A variable that is set wins over the file (fetchConfig).
type userConfig struct {
	Fetch fetchFileConfig `json:"fetch"`
}

// fetchFileConfig is the file's "fetch" object; a nil switch or an empty
// list is one the file does not set.
type fetchFileConfig struct {
	AllowPrivate   *bool    `json:"allowPrivate"`
	AllowLinkLocal *bool    `json:"allowLinkLocal"`
	Models         []string `json:"models"`
}

// userConfigKeys are the keys the file may hold, by object.
var userConfigKeys = map[string][]string{
	"":      {"fetch"},
	"fetch": {"allowPrivate", "allowLinkLocal", "models"},
}

// userConfigPath is where the user configuration file is: $SLIM_CONFIG,
// else $XDG_CONFIG_HOME/slim/config.json, else
// $HOME/.config/slim/config.json; "" when none of them is set.
func userConfigPath(getenv func(string) string) string {
	if p := getenv("SLIM_CONFIG"); p != "" {
		return p
	}
	base := xdgBase(getenv, "XDG_CONFIG_HOME", ".config")
	if base == "" {
		return ""
	}
	return filepath.Join(base, "slim", "config.json")
}

// configErr is a configuration file slim refuses: a usage error (exit 2)
// that names the file.
func configErr(path, format string, args ...any) error {
	return usageErr("config file %s: %s", path, fmt.Sprintf(format, args...))
}

// readUserConfig reads the configuration file at path. A missing file is
// no configuration. Because the file can open the address policy, which
// the model must never be able to do, it is refused (an error, never
// ignored) unless it is a regular file (a symbolic link is followed and
// its target judged), owned by the current user, not writable by group or
// others, and outside every directory of projects: the directories the
// model may write in (the session's directory, and the worktree holding
// it). Nothing the model can plant or change is taken.
func readUserConfig(path string, projects []string) (userConfig, error) {
	var uc userConfig
	if path == "" {
		return uc, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return uc, configErr(path, "%v", err)
	}
	target, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return uc, nil
	}
	if err != nil {
		return uc, configErr(path, "cannot be resolved: %v", err)
	}
	shown := path
	if target != abs {
		shown = path + " (" + target + ")"
	}
	for _, p := range projects {
		if within(p, target) {
			return uc, configErr(shown, "lies inside the project directory %s, where the model can write; move it out", p)
		}
	}
	fi, err := os.Lstat(target)
	if err != nil {
		return uc, configErr(shown, "%v", err)
	}
	if !fi.Mode().IsRegular() {
		return uc, configErr(shown, "is not a regular file (%s)", fi.Mode().Type())
	}
	f, err := os.OpenFile(target, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return uc, configErr(shown, "%v", err)
	}
	defer f.Close()
	// Judge the file opened, not the name: it may have been swapped
	// since the Lstat.
	if fi, err = f.Stat(); err != nil {
		return uc, configErr(shown, "%v", err)
	}
	if !fi.Mode().IsRegular() {
		return uc, configErr(shown, "is not a regular file (%s)", fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); permBits && perm&0o022 != 0 {
		return uc, configErr(shown, "is writable by its group or by others (mode %04o); run chmod go-w on it", perm)
	}
	if owner, ok := fileOwner(fi); ok && owner != os.Getuid() {
		return uc, configErr(shown, "belongs to user id %d, not to the current user (%d)", owner, os.Getuid())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxUserConfigBytes+1))
	if err != nil {
		return uc, configErr(shown, "%v", err)
	}
	if len(data) > maxUserConfigBytes {
		return uc, configErr(shown, "is larger than %d bytes", maxUserConfigBytes)
	}
	if err := decodeUserConfig(data, &uc); err != nil {
		return uc, configErr(shown, "%v", err)
	}
	return uc, nil
}

// decodeUserConfig reads exactly one JSON object whose keys (and those of
// its "fetch" object) are all known, into uc.
func decodeUserConfig(data []byte, uc *userConfig) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil || top == nil {
		if err == nil {
			err = errors.New("null")
		}
		return fmt.Errorf("is not one JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("is not one JSON object: more follows it")
	}
	if err := knownKeys("", top); err != nil {
		return err
	}
	if raw, ok := top["fetch"]; ok {
		var fetch map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fetch); err != nil {
			return fmt.Errorf(`"fetch" is not an object: %v`, err)
		}
		if err := knownKeys("fetch", fetch); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(data, uc); err != nil {
		return fmt.Errorf("a value has the wrong type: %v", err)
	}
	return nil
}

// knownKeys refuses a key of the object at path that userConfigKeys does
// not list, naming it and the keys that are known.
func knownKeys(path string, obj map[string]json.RawMessage) error {
	allowed := userConfigKeys[path]
	var unknown []string
	for k := range obj {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	name := unknown[0]
	if path != "" {
		name = path + "." + name
	}
	return fmt.Errorf("unknown key %q (known: %s)", name, strings.Join(allowed, ", "))
}

// within reports whether path is dir or lies below it; both are absolute
// and free of symbolic links.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// projectDirs are the directories a configuration file must not lie in
// for a fetch run in the session directory dir: dir itself and the
// worktree that holds it, each without symbolic links. None when dir is
// "" (run by hand, without the host's context).
func projectDirs(dir string) []string {
	if dir == "" {
		return nil
	}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if phys, err := filepath.EvalSymlinks(p); err == nil {
			p = phys
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(dir)
	if info, err := worktree.Resolve(dir); err == nil {
		add(info.Directory)
		add(info.Worktree)
	}
	return out
}
