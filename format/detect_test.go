package format

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDetectionFollowsTheHostRules runs each documented rule of the host's
// table against real files: which formatters run on a file, and the reason
// the checked one gives.
func TestDetectionFollowsTheHostRules(t *testing.T) {
	const on = `{"formatter": true}`
	for _, tc := range []struct {
		name    string
		session string // the session directory below the worktree top
		setup   func(fx *fixture)
		opts    func(fx *fixture, o *Options)
		file    string
		check   string // the formatter whose reason is checked
		reason  string
		running string // the formatters that run, in order
	}{
		{
			name:  "extension matches and the program is on PATH",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "gofmt", "") },
			file:  "main.go", check: "gofmt", reason: ReasonRuns, running: "gofmt",
		},
		{
			name:  "extension does not match",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "gofmt", "") },
			file:  "main.txt", check: "gofmt", reason: ReasonExtension, running: "",
		},
		{
			name:  "extension match is case-sensitive",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "gofmt", "") },
			file:  "MAIN.GO", check: "gofmt", reason: ReasonExtension, running: "",
		},
		{
			name:  "upper-case C is a C++ file for clang-format",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "clang-format", ""); fx.write(".clang-format", "") },
			file:  "x.C", check: "clang-format", reason: ReasonRuns, running: "clang-format",
		},
		{
			name:  "program missing from PATH",
			setup: func(fx *fixture) { fx.config(on) },
			file:  "main.go", check: "gofmt", reason: ReasonNoProgram, running: "",
		},
		{
			name:  "program found in the host's own bin directory",
			setup: func(fx *fixture) { fx.config(on); fx.program(filepath.Join(fx.home, "hostbin"), "gofmt", "") },
			opts:  func(fx *fixture, o *Options) { o.HostBin = filepath.Join(fx.home, "hostbin") },
			file:  "main.go", check: "gofmt", reason: ReasonRuns, running: "gofmt",
		},
		{
			name:    "config file found in a parent of the session directory",
			session: "src/deep",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.program("", "clang-format", "")
				fx.write(".clang-format", "BasedOnStyle: LLVM\n")
			},
			file: "src/deep/a.c", check: "clang-format", reason: ReasonRuns, running: "clang-format",
		},
		{
			name:  "config file without the program",
			setup: func(fx *fixture) { fx.config(on); fx.write(".clang-format", "") },
			file:  "a.c", check: "clang-format", reason: ReasonNoProgram, running: "",
		},
		{
			name:  "the walk stops at the worktree top",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "clang-format", ""); fx.write("../.clang-format", "") },
			file:  "a.c", check: "clang-format", reason: ReasonNoMarker, running: "",
		},
		{
			name:    "the walk starts at the session directory, not at the file",
			session: "app",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.program("", "clang-format", "")
				fx.write("lib/.clang-format", "")
			},
			file: "lib/a.c", check: "clang-format", reason: ReasonNoMarker, running: "",
		},
		{
			name: "package.json dependency with the program in node_modules/.bin",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"prettier": "^3.6.0"}}`)
				fx.program(filepath.Join(fx.root, "node_modules", ".bin"), "prettier", "")
			},
			file: "web/app.ts", check: "prettier", reason: ReasonRuns, running: "prettier",
		},
		{
			name: "package.json dependency with the program in the host's package cache",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"dependencies": {"prettier": "3.6.2"}}`)
				fx.program(filepath.Join(fx.home, "cache", "prettier", "node_modules", ".bin"), "prettier", "")
			},
			opts: func(fx *fixture, o *Options) { o.HostPackages = filepath.Join(fx.home, "cache") },
			file: "a.md", check: "prettier", reason: ReasonRuns, running: "prettier",
		},
		{
			name: "package.json dependency but no program anywhere",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"prettier": "^3"}}`)
			},
			file: "a.ts", check: "prettier", reason: ReasonNoPackage, running: "",
		},
		{
			name: "a dependency listed only in peerDependencies does not count",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"peerDependencies": {"prettier": "^3"}}`)
				fx.program("", "prettier", "")
			},
			file: "a.ts", check: "prettier", reason: ReasonNoDependency, running: "",
		},
		{
			name: "an empty version string does not count",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"prettier": ""}}`)
				fx.program("", "prettier", "")
			},
			file: "a.ts", check: "prettier", reason: ReasonNoDependency, running: "",
		},
		{
			name:    "a package.json in an inner directory is read before the outer one",
			session: "pkg",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("pkg/package.json", `{"name": "inner"}`)
				fx.write("package.json", `{"devDependencies": {"prettier": "^3"}}`)
				fx.program("", "prettier", "")
			},
			file: "pkg/a.ts", check: "prettier", reason: ReasonRuns, running: "prettier",
		},
		{
			name: "a package.json that is not JSON stops the detection",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"prettier": "^3"},}`)
				fx.program("", "prettier", "")
			},
			file: "a.ts", check: "prettier", reason: ReasonDetectFailed, running: "",
		},
		{
			name: "prettier runs before biome",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"prettier": "^3", "@biomejs/biome": "2"}}`)
				fx.write("biome.jsonc", "{}")
				fx.program(filepath.Join(fx.root, "node_modules", ".bin"), "prettier", "")
				fx.program(filepath.Join(fx.root, "node_modules", ".bin"), "biome", "")
			},
			file: "a.tsx", check: "biome", reason: ReasonRuns, running: "prettier biome",
		},
		{
			name:  "biome needs its config file",
			setup: func(fx *fixture) { fx.config(on); fx.program("", "biome", "") },
			file:  "a.js", check: "biome", reason: ReasonNoMarker, running: "",
		},
		{
			name: "oxfmt needs the experimental switch",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"oxfmt": "1"}}`)
				fx.program("", "oxfmt", "")
			},
			file: "a.ts", check: "oxfmt", reason: ReasonExperimental, running: "",
		},
		{
			name: "oxfmt with the experimental switch",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("package.json", `{"devDependencies": {"oxfmt": "1"}}`)
				fx.program("", "oxfmt", "")
			},
			opts: func(fx *fixture, o *Options) { o.Experimental = map[string]bool{"oxfmt": true} },
			file: "a.ts", check: "oxfmt", reason: ReasonRuns, running: "oxfmt",
		},
		{
			name: "ruff with [tool.ruff] in pyproject.toml",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.ruff]\nline-length = 100\n")
				fx.program("", "ruff", "")
				fx.program("", "uv", "exit 0")
			},
			file: "a.py", check: "uv", reason: ReasonSuperseded, running: "ruff",
		},
		{
			name: "ruff named in requirements.txt",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("requirements.txt", "requests\nruff==0.6\n")
				fx.program("", "ruff", "")
			},
			file: "a.pyi", check: "ruff", reason: ReasonRuns, running: "ruff",
		},
		{
			name: "ruff on PATH without a ruff config leaves Python to uv",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("pyproject.toml", "[project]\nname = \"x\"\n")
				fx.program("", "ruff", "")
				fx.program("", "uv", `[ "$1 $2" = "format --help" ] || exit 1`)
			},
			file: "a.py", check: "ruff", reason: ReasonNoMarker, running: "uv",
		},
		{
			name: "uv whose format subcommand fails its probe",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.program("", "uv", "echo 'unknown command' >&2; exit 2")
			},
			file: "a.py", check: "uv", reason: ReasonProbeFailed, running: "",
		},
		{
			name: "air must say it is an R formatter",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.program("", "air", "echo 'An extremely fast R language formatter.'")
			},
			file: "a.R", check: "air", reason: ReasonRuns, running: "air",
		},
		{
			name: "an air that is not the R formatter",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.program("", "air", "echo 'Live reload for Go apps'")
			},
			file: "a.R", check: "air", reason: ReasonProbeFailed, running: "",
		},
		{
			name: "pint from composer.json require-dev",
			setup: func(fx *fixture) {
				fx.config(on)
				fx.write("composer.json", `{"require-dev": {"laravel/pint": "^1.0"}}`)
			},
			file: "a.php", check: "pint", reason: ReasonRuns, running: "pint",
		},
		{
			name:  "formatting is off without a formatter key",
			setup: func(fx *fixture) { fx.config(`{"model": "x/y"}`); fx.program("", "gofmt", "") },
			file:  "main.go", check: "gofmt", reason: ReasonOff, running: "",
		},
		{
			name:  "formatter: false turns every formatter off",
			setup: func(fx *fixture) { fx.config(`{"formatter": false}`); fx.program("", "gofmt", "") },
			file:  "main.go", check: "gofmt", reason: ReasonOff, running: "",
		},
		{
			name:  "an object enables the built-ins",
			setup: func(fx *fixture) { fx.config(`{"formatter": {}}`); fx.program("", "gofmt", "") },
			file:  "main.go", check: "gofmt", reason: ReasonRuns, running: "gofmt",
		},
		{
			name: "disabled: true takes one formatter out",
			setup: func(fx *fixture) {
				fx.config(`{"formatter": {"gofmt": {"disabled": true}}}`)
				fx.program("", "gofmt", "")
			},
			file: "main.go", check: "gofmt", reason: ReasonDisabled, running: "",
		},
		{
			name: "disabling ruff disables uv too",
			setup: func(fx *fixture) {
				fx.config(`{"formatter": {"ruff": {"disabled": true}}}`)
				fx.program("", "uv", "exit 0")
			},
			file: "a.py", check: "uv", reason: ReasonDisabled, running: "",
		},
		{
			name: "a custom entry runs its command on its extensions",
			setup: func(fx *fixture) {
				fx.config(`{"formatter": {"tidy": {"command": ["tidy-up", "--in-place", "$FILE"], "extensions": [".txt"]}}}`)
			},
			file: "notes.txt", check: "tidy", reason: ReasonRuns, running: "tidy",
		},
		{
			name:  "a custom entry without a command never runs",
			setup: func(fx *fixture) { fx.config(`{"formatter": {"tidy": {"extensions": [".txt"]}}}`) },
			file:  "notes.txt", check: "tidy", reason: ReasonNoCommand, running: "",
		},
		{
			name:  "a built-in given a command runs it without its rule",
			setup: func(fx *fixture) { fx.config(`{"formatter": {"gofmt": {"command": ["goimports", "-w", "$FILE"]}}}`) },
			file:  "main.go", check: "gofmt", reason: ReasonRuns, running: "gofmt",
		},
		{
			name: "a built-in given extensions handles only those",
			setup: func(fx *fixture) {
				fx.config(`{"formatter": {"gofmt": {"extensions": [".gotmpl"]}}}`)
				fx.program("", "gofmt", "")
			},
			file: "main.go", check: "gofmt", reason: ReasonExtension, running: "",
		},
		{
			name: "custom entries run after the built-ins",
			setup: func(fx *fixture) {
				fx.config(`{"formatter": {"zzz": {"command": ["z", "$FILE"], "extensions": [".go"]}, "gofmt": {}}}`)
				fx.program("", "gofmt", "")
			},
			file: "main.go", check: "zzz", reason: ReasonRuns, running: "gofmt zzz",
		},
		{
			name: "JSONC config with comments and trailing commas",
			setup: func(fx *fixture) {
				fx.write("opencode.jsonc", "{\n  // format Go only\n  \"formatter\": {\n    /* no shell scripts */\n    \"shfmt\": {\"disabled\": true,},\n  },\n}\n")
				fx.program("", "gofmt", "")
				fx.program("", "shfmt", "")
			},
			file: "run.sh", check: "shfmt", reason: ReasonDisabled, running: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t, tc.session)
			tc.setup(fx)
			var opts Options
			if tc.opts != nil {
				tc.opts(fx, &opts)
			}
			x := fx.explain(fx.host(opts), tc.file)
			if got := running(x); got != tc.running {
				t.Errorf("running %q, want %q", got, tc.running)
			}
			d := decision(t, x, tc.check)
			if d.Reason != tc.reason {
				t.Errorf("%s: reason %s (%s), want %s", tc.check, d.Reason, d.Detail, tc.reason)
			}
			if d.Detail == "" {
				t.Errorf("%s: no detail", tc.check)
			}
		})
	}
}

// The command of a running formatter is its argument vector with the
// program found and $FILE replaced by the file's absolute path.
func TestExplainGivesTheCommandThatRuns(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": {"tidy": {"command": ["tidy-up", "--file=$FILE", "$FILE", "$FILE:$FILE"], "extensions": [".txt"]}}}`)
	gofmt := fx.program("", "gofmt", "")
	x := fx.explain(fx.host(Options{}), "a.go")
	if d := decision(t, x, "gofmt"); !slices.Equal(d.Command, []string{gofmt, "-w", filepath.Join(fx.root, "a.go")}) {
		t.Errorf("gofmt command %q", d.Command)
	}
	if x.File != filepath.Join(fx.root, "a.go") || x.Extension != ".go" {
		t.Errorf("file %s extension %q", x.File, x.Extension)
	}
	x = fx.explain(fx.host(Options{}), "n.txt")
	abs := filepath.Join(fx.root, "n.txt")
	// Only the first $FILE of each argument is replaced, as the host does.
	if d := decision(t, x, "tidy"); !slices.Equal(d.Command, []string{"tidy-up", "--file=" + abs, abs, abs + ":$FILE"}) {
		t.Errorf("tidy command %q", d.Command)
	}
	x = fx.explain(fx.host(Options{}), "odd$&name.txt")
	if d := decision(t, x, "tidy"); d.Command[2] != filepath.Join(fx.root, "odd$&name.txt") {
		t.Errorf("a $ in the name reached the command as %q", d.Command[2])
	}
}

// Every formatter of the table appears once in an explanation, in the
// host's order, each with a reason.
func TestExplainAccountsForEveryFormatter(t *testing.T) {
	fx := newFixture(t, "")
	fx.config(`{"formatter": true}`)
	x := fx.explain(fx.host(Options{}), "a.go")
	var want []string
	for _, f := range Builtins() {
		want = append(want, f.Name)
	}
	if got := names(x.Formatters); got != strings.Join(want, " ") {
		t.Errorf("formatters %s, want %s", got, strings.Join(want, " "))
	}
	for _, d := range x.Formatters {
		if d.Reason == "" || d.Detail == "" {
			t.Errorf("%s: reason %q detail %q", d.Name, d.Reason, d.Detail)
		}
	}
}

// The table reproduces the host's entries for the formatters people use
// most: a changed command or extension list fails here.
func TestBuiltinsMatchTheHostTable(t *testing.T) {
	want := map[string]struct {
		command string
		exts    string
	}{
		"gofmt":        {"gofmt -w $FILE", ".go"},
		"rustfmt":      {"rustfmt $FILE", ".rs"},
		"shfmt":        {"shfmt -w $FILE", ".sh .bash"},
		"ruff":         {"ruff format $FILE", ".py .pyi"},
		"uv":           {"uv format -- $FILE", ".py .pyi"},
		"clang-format": {"clang-format -i $FILE", ".c .cc .cpp .cxx .c++ .h .hh .hpp .hxx .h++ .ino .C .H"},
		"biome":        {"biome format --write $FILE", ".js .jsx .mjs .cjs .ts .tsx .mts .cts .html .htm .css .scss .sass .less .vue .svelte .json .jsonc .yaml .yml .toml .xml .md .mdx .graphql .gql"},
		"prettier":     {"prettier --write $FILE", ".js .jsx .mjs .cjs .ts .tsx .mts .cts .html .htm .css .scss .sass .less .vue .svelte .json .jsonc .yaml .yml .toml .xml .md .mdx .graphql .gql"},
		"terraform":    {"terraform fmt $FILE", ".tf .tfvars"},
		"pint":         {"./vendor/bin/pint $FILE", ".php"},
	}
	seen := map[string]bool{}
	for _, f := range Builtins() {
		if seen[f.Name] {
			t.Errorf("%s is listed twice", f.Name)
		}
		seen[f.Name] = true
		if w, ok := want[f.Name]; ok {
			if got := strings.Join(f.Command, " "); got != w.command {
				t.Errorf("%s command %q, want %q", f.Name, got, w.command)
			}
			if got := strings.Join(f.Extensions, " "); got != w.exts {
				t.Errorf("%s extensions %q, want %q", f.Name, got, w.exts)
			}
		}
		if !slices.Contains(f.Command, "$FILE") {
			t.Errorf("%s command %q has no $FILE", f.Name, f.Command)
		}
	}
	if len(seen) != 26 {
		t.Errorf("%d formatters, want the host's 26", len(seen))
	}
}

// Node's path.extname, which the host matches extensions with; the
// expected values come from Node itself.
func TestExtnameIsNodes(t *testing.T) {
	for in, want := range map[string]string{
		"a.go": ".go", "/x/.bashrc": "", "/x/a.": ".", "/x/..a": ".a", "/x/a.b.C": ".C", "/x/.a.go": ".go",
		"/x/...": ".", "/x/a..go": ".go", "/x/.": "", "/x/..": "", "x/.a.": ".", "file.html.erb": ".erb",
		"/x/Makefile": "", "a.go/": ".go", "/x.d/file": "", "/x/a.tar.gz": ".gz", "..": "", "...": ".",
		"/": "", "": "", "/x/.gitignore.bak": ".bak", "/x/a.R": ".R", "/x//a.rs//": ".rs",
	} {
		if got := extname(in); got != want {
			t.Errorf("extname(%q) = %q, want %q", in, got, want)
		}
	}
}
