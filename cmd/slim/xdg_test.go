package main

import "testing"

// OpenCode's configuration and cache directories, and so the formatter
// options and the doctor's search path, follow the XDG variable when it is
// set, else the directory under HOME, and are unknown ("") with neither.
func TestOpenCodeDirectoriesFollowXDGThenHome(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		env                          map[string]string
		globalDir, hostBin, hostPkgs string
	}{
		{"xdg wins over home",
			map[string]string{"XDG_CONFIG_HOME": "/xc", "XDG_CACHE_HOME": "/xk", "HOME": "/h"},
			"/xc/opencode", "/xk/opencode/bin", "/xk/opencode/packages"},
		{"home alone",
			map[string]string{"HOME": "/h"},
			"/h/.config/opencode", "/h/.cache/opencode/bin", "/h/.cache/opencode/packages"},
		{"one variable of two",
			map[string]string{"XDG_CACHE_HOME": "/xk", "HOME": "/h"},
			"/h/.config/opencode", "/xk/opencode/bin", "/xk/opencode/packages"},
		{"neither", map[string]string{}, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string { return tc.env[k] }
			opts := readFormatOptions(getenv)
			if opts.Config.GlobalDir != tc.globalDir || opts.HostBin != tc.hostBin || opts.HostPackages != tc.hostPkgs {
				t.Errorf("format options: config %q, bin %q, packages %q; want %q, %q, %q",
					opts.Config.GlobalDir, opts.HostBin, opts.HostPackages, tc.globalDir, tc.hostBin, tc.hostPkgs)
			}
			if got := openCodeBinDir(getenv); got != tc.hostBin {
				t.Errorf("openCodeBinDir = %q, want %q", got, tc.hostBin)
			}
		})
	}
}
