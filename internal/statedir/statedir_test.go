package statedir

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestRootFrom(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	cache := func() (string, error) { return "/cache/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		name string
		env  map[string]string
		goos string
		home func() (string, error)
		want string
		err  bool
	}{
		{"override", map[string]string{"SLIM_STATE_DIR": "/s", "XDG_STATE_HOME": "/x"}, "linux", home, "/s", false},
		{"xdg", map[string]string{"XDG_STATE_HOME": "/x"}, "linux", home, "/x/slim", false},
		{"xdg on darwin", map[string]string{"XDG_STATE_HOME": "/x"}, "darwin", home, "/x/slim", false},
		{"linux home", nil, "linux", home, "/home/u/.local/state/slim", false},
		{"freebsd home", nil, "freebsd", home, "/home/u/.local/state/slim", false},
		{"darwin cache", nil, "darwin", home, "/cache/u/slim", false},
		{"windows cache", nil, "windows", home, filepath.Join("/cache/u", "slim"), false},
		{"no home", nil, "linux", noHome, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RootFrom(func(k string) string { return c.env[k] }, c.goos, c.home, cache)
			if (err != nil) != c.err {
				t.Fatalf("err = %v, want error %v", err, c.err)
			}
			if got != filepath.FromSlash(c.want) && !(c.want == "" && got == "") {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestRelativeOverrideIsMadeAbsolute(t *testing.T) {
	got, err := RootFrom(func(k string) string {
		if k == Env {
			return "rel/state"
		}
		return ""
	}, "linux", nil, nil)
	if err != nil || !filepath.IsAbs(got) {
		t.Fatalf("got %q, %v; want an absolute path", got, err)
	}
}
