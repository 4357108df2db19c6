//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The file is looked for at $SLIM_CONFIG, else under $XDG_CONFIG_HOME,
// else under ~/.config.
func TestUserConfigPathOrder(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SLIM_CONFIG": "/a/c.json", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/a/c.json"},
		{map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/slim/config.json"},
		{map[string]string{"HOME": "/h"}, "/h/.config/slim/config.json"},
		{map[string]string{}, ""},
	} {
		if got := userConfigPath(func(k string) string { return tc.env[k] }); got != tc.want {
			t.Errorf("userConfigPath(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// A file that belongs to another user, one over the size bound, or one that
// is not exactly one JSON object is refused with a message naming it; a
// good one is read with every key.
func TestReadUserConfigRefusesWhatTheUserDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", `{"fetch": {"allowPrivate": true, "allowLinkLocal": false, "models": ["p/a", "p/b#fast"]}}`)
	uc, err := readUserConfig(good, nil)
	if err != nil || uc.Fetch.AllowPrivate == nil || !*uc.Fetch.AllowPrivate || uc.Fetch.AllowLinkLocal == nil || *uc.Fetch.AllowLinkLocal ||
		strings.Join(uc.Fetch.Models, ",") != "p/a,p/b#fast" {
		t.Fatalf("readUserConfig(good) = %+v, %v", uc, err)
	}

	other := write("other.json", `{"fetch": {"allowPrivate": true}}`)
	if os.Getuid() == 0 {
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	} else {
		other = "/etc/passwd" // the system's, not this user's
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"another user's", other, "belongs to user id "},
		{"over the bound", write("big.json", `{"fetch": {"models": ["`+strings.Repeat("p/m,", maxUserConfigBytes/4)+`"]}}`), "is larger than 65536 bytes"},
		{"two objects", write("two.json", `{} {}`), "more follows it"},
		{"not an object", write("list.json", `["fetch"]`), "is not one JSON object"},
		{"empty", write("empty.json", ``), "is not one JSON object"},
		{"null", write("null.json", `null`), "is not one JSON object"},
		{"fetch not an object", write("str.json", `{"fetch": "open"}`), `"fetch" is not an object`},
	} {
		_, err := readUserConfig(tc.path, nil)
		if err == nil || !strings.Contains(err.Error(), "config file "+tc.path) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.name, err, tc.want)
		}
		if err == nil {
			continue
		}
		if code := classify(err).Kind.ExitCode(); code != 2 {
			t.Errorf("%s: exit %d, want 2", tc.name, code)
		}
	}
}
