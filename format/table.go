package format

// Formatter is one entry of the host's formatter table: what it runs, on
// which files, and when it is enabled.
type Formatter struct {
	// Name is the host's name for it, the key of the `formatter` setting.
	Name string `json:"name"`
	// Command is the argument vector; "$FILE" in an argument is replaced by
	// the file's absolute path. For a formatter enabled by a program (or an
	// npm package), the first word is replaced by the program found.
	Command []string `json:"command"`
	// Extensions are the file name extensions it handles, matched exactly
	// (case included) against the extension as Node's path.extname gives
	// it: ".go", ".C", "" for a name without one.
	Extensions []string `json:"extensions"`
	// Environment is added to the environment the command runs with.
	Environment map[string]string `json:"environment,omitempty"`
	// Rule decides whether it is enabled in a project. A formatter from the
	// configuration that names its own command has no rule: it is always
	// enabled.
	Rule Rule `json:"rule"`
	// Custom is true for an entry the configuration added or whose command
	// it replaced.
	Custom bool `json:"custom,omitempty"`
}

// Rule is a formatter's detection rule. Every condition that is set must
// hold; they are checked in the order of the fields. Files are looked for
// walking up from the session directory (the host's instance directory,
// not the file's) to the worktree top, both included, or to the file
// system root when there is no worktree.
type Rule struct {
	// Experimental names a host switch the formatter needs
	// (OPENCODE_EXPERIMENTAL_OXFMT, or OPENCODE_EXPERIMENTAL for all).
	Experimental string `json:"experimental,omitempty"`
	// Unless names a built-in formatter: this one is enabled only when that
	// one's own rule does not hold (uv formats Python only without ruff).
	Unless string `json:"unless,omitempty"`
	// Program must be found on PATH, or in the host's own bin directory.
	Program string `json:"program,omitempty"`
	// Markers: at least one must be found. A marker with Contains set
	// holds only when its nearest copy contains that text.
	Markers []Marker `json:"markers,omitempty"`
	// Dependency: a manifest found walking up must list the package. The
	// manifests are read nearest first; one that is not valid JSON stops
	// the detection with an error, as it stops the host.
	Dependency *Dependency `json:"dependency,omitempty"`
	// Package is the npm package whose program runs. The host downloads it
	// into its package cache; slim never downloads, and looks in that cache,
	// then in node_modules/.bin walking up, then on PATH.
	Package *Package `json:"package,omitempty"`
	// Probe runs the program once: it must exit 0, and the first line of
	// its output must contain every string of FirstLineContains.
	Probe *Probe `json:"probe,omitempty"`
}

// Marker is a file whose presence (and, with Contains, content) enables a
// formatter.
type Marker struct {
	File     string `json:"file"`
	Contains string `json:"contains,omitempty"`
}

// Dependency is a package a manifest (package.json, composer.json) must
// list, with a value that is not empty, false, 0 or null, in one of
// Sections.
type Dependency struct {
	Manifest string   `json:"manifest"`
	Sections []string `json:"sections"`
	Name     string   `json:"name"`
}

// Package is an npm package and the name of its program in
// node_modules/.bin.
type Package struct {
	Name string `json:"name"`
	Bin  string `json:"bin"`
}

// Probe is a run of the formatter's program that must succeed.
type Probe struct {
	Args              []string `json:"args"`
	FirstLineContains []string `json:"firstLineContains,omitempty"`
}

// HostVersion is the OpenCode release whose formatter table and detection
// rules Builtins reproduces.
const HostVersion = "opencode-ai 1.18.33"

// Builtins returns the host's built-in formatters in the host's own order,
// the order in which it runs several formatters on one file (prettier
// before biome, standardrb before rubocop). The table matches
// HostVersion: names, commands, extensions (".html.erb" is listed for
// htmlbeautifier, though an extension never has two dots, so only ".erb"
// files reach it), environments and rules. Each call returns a fresh copy.
func Builtins() []Formatter {
	jsLike := []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".html", ".htm", ".css", ".scss", ".sass", ".less", ".vue", ".svelte", ".json", ".jsonc", ".yaml", ".yml", ".toml", ".xml", ".md", ".mdx", ".graphql", ".gql"}
	bunEnv := func() map[string]string { return map[string]string{"BUN_BE_BUN": "1"} }
	program := func(p string) Rule { return Rule{Program: p} }
	npmDeps := []string{"dependencies", "devDependencies"}
	return []Formatter{
		{Name: "zig", Command: []string{"zig", "fmt", "$FILE"}, Extensions: []string{".zig", ".zon"}, Rule: program("zig")},
		{Name: "uv", Command: []string{"uv", "format", "--", "$FILE"}, Extensions: []string{".py", ".pyi"},
			Rule: Rule{Unless: "ruff", Program: "uv", Probe: &Probe{Args: []string{"format", "--help"}}}},
		{Name: "terraform", Command: []string{"terraform", "fmt", "$FILE"}, Extensions: []string{".tf", ".tfvars"}, Rule: program("terraform")},
		{Name: "standardrb", Command: []string{"standardrb", "--fix", "$FILE"}, Extensions: []string{".rb", ".rake", ".gemspec", ".ru"}, Rule: program("standardrb")},
		{Name: "shfmt", Command: []string{"shfmt", "-w", "$FILE"}, Extensions: []string{".sh", ".bash"}, Rule: program("shfmt")},
		{Name: "rustfmt", Command: []string{"rustfmt", "$FILE"}, Extensions: []string{".rs"}, Rule: program("rustfmt")},
		{Name: "ruff", Command: []string{"ruff", "format", "$FILE"}, Extensions: []string{".py", ".pyi"},
			Rule: Rule{Program: "ruff", Markers: []Marker{
				{File: "pyproject.toml", Contains: "[tool.ruff]"}, {File: "ruff.toml"}, {File: ".ruff.toml"},
				{File: "requirements.txt", Contains: "ruff"}, {File: "pyproject.toml", Contains: "ruff"}, {File: "Pipfile", Contains: "ruff"},
			}}},
		{Name: "rubocop", Command: []string{"rubocop", "--autocorrect", "$FILE"}, Extensions: []string{".rb", ".rake", ".gemspec", ".ru"}, Rule: program("rubocop")},
		{Name: "air", Command: []string{"air", "format", "$FILE"}, Extensions: []string{".R"},
			Rule: Rule{Program: "air", Probe: &Probe{Args: []string{"--help"}, FirstLineContains: []string{"R language", "formatter"}}}},
		{Name: "prettier", Command: []string{"prettier", "--write", "$FILE"}, Extensions: jsLike, Environment: bunEnv(),
			Rule: Rule{Dependency: &Dependency{Manifest: "package.json", Sections: npmDeps, Name: "prettier"}, Package: &Package{Name: "prettier", Bin: "prettier"}}},
		{Name: "pint", Command: []string{"./vendor/bin/pint", "$FILE"}, Extensions: []string{".php"},
			Rule: Rule{Dependency: &Dependency{Manifest: "composer.json", Sections: []string{"require", "require-dev"}, Name: "laravel/pint"}}},
		{Name: "oxfmt", Command: []string{"oxfmt", "$FILE"}, Extensions: []string{".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"}, Environment: bunEnv(),
			Rule: Rule{Experimental: "oxfmt", Dependency: &Dependency{Manifest: "package.json", Sections: npmDeps, Name: "oxfmt"}, Package: &Package{Name: "oxfmt", Bin: "oxfmt"}}},
		{Name: "ormolu", Command: []string{"ormolu", "-i", "$FILE"}, Extensions: []string{".hs"}, Rule: program("ormolu")},
		{Name: "ocamlformat", Command: []string{"ocamlformat", "-i", "$FILE"}, Extensions: []string{".ml", ".mli"},
			Rule: Rule{Program: "ocamlformat", Markers: []Marker{{File: ".ocamlformat"}}}},
		{Name: "nixfmt", Command: []string{"nixfmt", "$FILE"}, Extensions: []string{".nix"}, Rule: program("nixfmt")},
		{Name: "mix", Command: []string{"mix", "format", "$FILE"}, Extensions: []string{".ex", ".exs", ".eex", ".heex", ".leex", ".neex", ".sface"}, Rule: program("mix")},
		{Name: "latexindent", Command: []string{"latexindent", "-w", "-s", "$FILE"}, Extensions: []string{".tex"}, Rule: program("latexindent")},
		{Name: "ktlint", Command: []string{"ktlint", "-F", "$FILE"}, Extensions: []string{".kt", ".kts"}, Rule: program("ktlint")},
		{Name: "htmlbeautifier", Command: []string{"htmlbeautifier", "$FILE"}, Extensions: []string{".erb", ".html.erb"}, Rule: program("htmlbeautifier")},
		{Name: "gofmt", Command: []string{"gofmt", "-w", "$FILE"}, Extensions: []string{".go"}, Rule: program("gofmt")},
		{Name: "gleam", Command: []string{"gleam", "format", "$FILE"}, Extensions: []string{".gleam"}, Rule: program("gleam")},
		{Name: "dfmt", Command: []string{"dfmt", "-i", "$FILE"}, Extensions: []string{".d"}, Rule: program("dfmt")},
		{Name: "dart", Command: []string{"dart", "format", "$FILE"}, Extensions: []string{".dart"}, Rule: program("dart")},
		{Name: "cljfmt", Command: []string{"cljfmt", "fix", "--quiet", "$FILE"}, Extensions: []string{".clj", ".cljs", ".cljc", ".edn"}, Rule: program("cljfmt")},
		{Name: "clang-format", Command: []string{"clang-format", "-i", "$FILE"}, Extensions: []string{".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".h++", ".ino", ".C", ".H"},
			Rule: Rule{Markers: []Marker{{File: ".clang-format"}}, Program: "clang-format"}},
		{Name: "biome", Command: []string{"biome", "format", "--write", "$FILE"}, Extensions: jsLike, Environment: bunEnv(),
			Rule: Rule{Markers: []Marker{{File: "biome.json"}, {File: "biome.jsonc"}}, Package: &Package{Name: "@biomejs/biome", Bin: "biome"}}},
	}
}
