package format

import (
	"path/filepath"
	"strings"
	"testing"
)

// loadIn loads the configuration for the fixture's session, with the
// given sources on top of the fixture's global directory and home.
func loadIn(t *testing.T, fx *fixture, src Sources) (*Config, error) {
	t.Helper()
	if src.GlobalDir == "" {
		src.GlobalDir = filepath.Join(fx.home, ".config", "opencode")
	}
	if src.Home == "" {
		src.Home = fx.home
	}
	return LoadConfig(fx.dir, fx.root, src)
}

func entryWords(c *Config) string {
	var out []string
	for _, e := range c.Entries {
		w := e.Name
		if e.Disabled {
			w += ":off"
		}
		if e.Command != nil {
			w += ":" + strings.Join(e.Command, ",")
		}
		if e.Extensions != nil {
			w += ":" + strings.Join(e.Extensions, ",")
		}
		for k, v := range e.Environment {
			w += ":" + k + "=" + v
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// TestConfigPrecedenceIsTheHosts writes config files in the places the
// host reads and checks which one wins, and how objects merge.
func TestConfigPrecedenceIsTheHosts(t *testing.T) {
	global := func(fx *fixture, name, json string) {
		fx.write("../home/.config/opencode/"+name, json)
	}
	for _, tc := range []struct {
		name    string
		session string
		setup   func(fx *fixture) Sources
		enabled bool
		entries string
	}{
		{
			name:  "nothing set: off",
			setup: func(fx *fixture) Sources { return Sources{} },
		},
		{
			name:    "the user's global config alone",
			setup:   func(fx *fixture) Sources { global(fx, "opencode.json", `{"formatter": true}`); return Sources{} },
			enabled: true,
		},
		{
			name: "global config.json, opencode.json, opencode.jsonc: the last wins",
			setup: func(fx *fixture) Sources {
				global(fx, "config.json", `{"formatter": {"a": {"disabled": true}}}`)
				global(fx, "opencode.json", `{"formatter": false}`)
				global(fx, "opencode.jsonc", `{"formatter": {"b": {"disabled": true}}}`)
				return Sources{}
			},
			enabled: true, entries: "b:off",
		},
		{
			name: "the project's false beats the user's object",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": {"gofmt": {"disabled": true}}}`)
				fx.config(`{"formatter": false}`)
				return Sources{}
			},
		},
		{
			name: "the project's object beats the user's false",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": false}`)
				fx.config(`{"formatter": {"gofmt": {"disabled": true}}}`)
				return Sources{}
			},
			enabled: true, entries: "gofmt:off",
		},
		{
			name: "objects merge key by key, the project's keys after the user's",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": {"mine": {"command": ["m", "$FILE"], "extensions": [".m"], "environment": {"A": "1"}}, "gofmt": {"disabled": true}}}`)
				fx.config(`{"formatter": {"shfmt": {"disabled": true}, "mine": {"extensions": [".mm"], "environment": {"B": "2"}}}}`)
				return Sources{}
			},
			enabled: true, entries: "mine:m,$FILE:.mm:A=1:B=2 gofmt:off shfmt:off",
		},
		{
			name: "true after an object drops the object's entries",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": {"gofmt": {"disabled": true}}}`)
				fx.config(`{"formatter": true}`)
				return Sources{}
			},
			enabled: true,
		},
		{
			name: "opencode.jsonc beats opencode.json in one directory",
			setup: func(fx *fixture) Sources {
				fx.write("opencode.json", `{"formatter": true}`)
				fx.write("opencode.jsonc", `{"formatter": false}`)
				return Sources{}
			},
		},
		{
			name:    "the session directory's file beats the worktree top's",
			session: "svc",
			setup: func(fx *fixture) Sources {
				fx.write("opencode.json", `{"formatter": false}`)
				fx.write("svc/opencode.json", `{"formatter": true}`)
				return Sources{}
			},
			enabled: true,
		},
		{
			name:    "a file below the session directory is not read",
			session: "svc",
			setup: func(fx *fixture) Sources {
				fx.write("svc/inner/opencode.json", `{"formatter": true}`)
				return Sources{}
			},
		},
		{
			name: "a file above the worktree top is not read",
			setup: func(fx *fixture) Sources {
				fx.write("../opencode.json", `{"formatter": true}`)
				return Sources{}
			},
		},
		{
			name:    "the outer .opencode directory beats the inner one",
			session: "svc",
			setup: func(fx *fixture) Sources {
				fx.write("svc/.opencode/opencode.json", `{"formatter": true}`)
				fx.write(".opencode/opencode.json", `{"formatter": false}`)
				return Sources{}
			},
		},
		{
			name: ".opencode beats the project's opencode.json",
			setup: func(fx *fixture) Sources {
				fx.config(`{"formatter": false}`)
				fx.write(".opencode/opencode.jsonc", `{"formatter": true}`)
				return Sources{}
			},
			enabled: true,
		},
		{
			name: "~/.opencode beats the project's .opencode",
			setup: func(fx *fixture) Sources {
				fx.write(".opencode/opencode.json", `{"formatter": true}`)
				fx.write("../home/.opencode/opencode.json", `{"formatter": false}`)
				return Sources{}
			},
		},
		{
			name: "OPENCODE_CONFIG comes before the project",
			setup: func(fx *fixture) Sources {
				p := fx.write("../custom.json", `{"formatter": true}`)
				fx.config(`{"formatter": {"gofmt": {"disabled": true}}}`)
				return Sources{File: p}
			},
			enabled: true, entries: "gofmt:off",
		},
		{
			name: "OPENCODE_CONFIG_DIR beats the project",
			setup: func(fx *fixture) Sources {
				fx.write("../cfgdir/opencode.json", `{"formatter": false}`)
				fx.config(`{"formatter": true}`)
				return Sources{Dir: filepath.Join(fx.above, "cfgdir")}
			},
		},
		{
			name: "OPENCODE_CONFIG_CONTENT beats every file but the managed ones",
			setup: func(fx *fixture) Sources {
				fx.config(`{"formatter": false}`)
				return Sources{Content: `{"formatter": {"x": {"disabled": true}}}`}
			},
			enabled: true, entries: "x:off",
		},
		{
			name: "the managed directory wins over everything",
			setup: func(fx *fixture) Sources {
				fx.write("../managed/opencode.json", `{"formatter": false}`)
				return Sources{Content: `{"formatter": true}`, ManagedDir: filepath.Join(fx.above, "managed")}
			},
		},
		{
			name: "OPENCODE_DISABLE_PROJECT_CONFIG skips the project's files and .opencode",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": true}`)
				fx.config(`{"formatter": false}`)
				fx.write(".opencode/opencode.json", `{"formatter": false}`)
				return Sources{NoProject: true}
			},
			enabled: true,
		},
		{
			name: "an empty file counts as {}",
			setup: func(fx *fixture) Sources {
				global(fx, "opencode.json", `{"formatter": true}`)
				fx.config("")
				return Sources{}
			},
			enabled: true,
		},
		{
			name: "{env:NAME} is replaced before parsing",
			setup: func(fx *fixture) Sources {
				fx.config(`{"formatter": {"x": {"command": ["{env:FMT_BIN}", "$FILE"], "environment": {"U": "{env:UNSET}"}}}}`)
				return Sources{Getenv: func(k string) string {
					if k == "FMT_BIN" {
						return "/opt/fmt"
					}
					return ""
				}}
			},
			enabled: true, entries: "x:/opt/fmt,$FILE:U=",
		},
		{
			name: "{file:PATH} is replaced by the trimmed file, relative to the config file",
			setup: func(fx *fixture) Sources {
				fx.write("fmt-cmd.txt", "  say \"hi\"\n")
				fx.config("{\n  // {file:missing.txt} in a comment is left alone\n  \"formatter\": {\"x\": {\"command\": [\"{file:fmt-cmd.txt}\"]}}\n}")
				return Sources{}
			},
			enabled: true, entries: `x:say "hi"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, tc.session)
			src := tc.setup(fx)
			cfg, err := loadIn(t, fx, src)
			if err != nil {
				t.Fatalf("LoadConfig: %v", err)
			}
			if cfg.Enabled != tc.enabled {
				t.Errorf("enabled %v, want %v (from %v)", cfg.Enabled, tc.enabled, cfg.From)
			}
			if got := entryWords(cfg); got != tc.entries {
				t.Errorf("entries %q, want %q", got, tc.entries)
			}
		})
	}
}

// A config the host would refuse to start with is a Validation error that
// names the file and says what is wrong.
func TestMalformedConfigIsRefused(t *testing.T) {
	for _, tc := range []struct{ name, json, msg string }{
		{"not JSONC", `{"formatter": true`, "not valid JSONC"},
		{"a byte order mark", "\ufeff{\"formatter\": true}", "not valid JSONC"},
		{"not an object", `["formatter"]`, "an array, not an object"},
		{"formatter a string", `{"formatter": "yes"}`, "formatter must be true, false or an object"},
		{"entry not an object", `{"formatter": {"gofmt": false}}`, "formatter.gofmt must be an object"},
		{"command a string", `{"formatter": {"x": {"command": "x $FILE"}}}`, "formatter.x.command must be an array of strings"},
		{"extensions with a number", `{"formatter": {"x": {"extensions": [".x", 1]}}}`, "formatter.x.extensions must be an array of strings"},
		{"disabled a string", `{"formatter": {"gofmt": {"disabled": "true"}}}`, "formatter.gofmt.disabled must be true or false"},
		{"environment with a number", `{"formatter": {"x": {"environment": {"A": 1}}}}`, "formatter.x.environment must be an object of strings"},
		{"null command", `{"formatter": {"x": {"command": null}}}`, "formatter.x.command must be an array of strings"},
		{"a missing {file:} reference", `{"formatter": {"x": {"command": ["{file:nope.txt}"]}}}`, "bad file reference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, "")
			p := fx.write("opencode.json", tc.json)
			_, err := loadIn(t, fx, Sources{})
			e, ok := AsError(err)
			if !ok || e.Kind != Validation || e.Code != CodeConfigInvalid {
				t.Fatalf("error %v, want a Validation error %s", err, CodeConfigInvalid)
			}
			if !strings.Contains(e.Message, p) || !strings.Contains(e.Message, tc.msg) {
				t.Errorf("message %q, want the file %s and %q", e.Message, p, tc.msg)
			}
			if _, err := fx.newHost(Options{}); err == nil {
				t.Error("NewHost accepted the config")
			}
		})
	}
}

// Keys the host's schema does not know are ignored, as the host ignores
// them, and so are other settings of the file.
func TestUnknownKeysAreIgnored(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"theme": 3, "formatter": {"gofmt": {"disabled": true, "note": 1}}}`)
	cfg, err := loadIn(t, fx, Sources{})
	if err != nil || !cfg.Enabled || entryWords(cfg) != "gofmt:off" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if len(cfg.From) != 1 || cfg.From[0] != filepath.Join(fx.root, "opencode.json") {
		t.Errorf("from %v", cfg.From)
	}
}

// Without a worktree, the project's files are looked for up to the file
// system root, as the host does for a directory outside git.
func TestNoWorktreeWalksToTheRoot(t *testing.T) {
	fx := newFixture(t, "svc")
	fx.write("../opencode.json", `{"formatter": true}`)
	cfg, err := LoadConfig(fx.dir, "", Sources{})
	if err != nil || !cfg.Enabled {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if cfg, _ := LoadConfig(fx.dir, fx.root, Sources{}); cfg.Enabled {
		t.Error("with a worktree, a file above its top was read")
	}
}

func TestSubstituteReadsReferencesAsTheHostDoes(t *testing.T) {
	env := func(k string) string { return map[string]string{"A": "1", "{env:B": "odd"}[k] }
	for in, want := range map[string]string{
		`{env:A}{env:A}`:   `11`,
		`{env:}`:           `{env:}`,
		`{env:NOPE}x`:      `x`,
		`{env:{env:B}}`:    `odd}`,
		`{env:A`:           `{env:A`,
		"// {file:none}":   "// {file:none}",
		"  // {file:none}": "  // {file:none}",
	} {
		got, err := substitute(in, t.TempDir(), Sources{Getenv: env})
		if err != nil || got != want {
			t.Errorf("substitute(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
