package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// settings are the SLIM_* environment variables the commands act on, read
// once when slim starts (slim fetch's own, once when it runs). The library packages read none of them: each
// reaches them as an option. (The state directory, SLIM_STATE_DIR, is
// found by internal/statedir when a command asks for it.)
type settings struct {
	// allowNested is SLIM_ALLOW_NESTED=1: targets inside nested worktrees,
	// submodules and nested repositories count as inside.
	allowNested bool
	// outside is SLIM_OUTSIDE: "block" or "passthrough" for apply_patch
	// targets outside the workspace; "" means block.
	outside string
	// hookTimeout is SLIM_HOOK_TIMEOUT_MS as the plugin passes it on, unparsed
	// (patchBudget reads it the way the plugin does).
	hookTimeout string
	// logFile is SLIM_LOG_FILE and logLevel SLIM_LOG_LEVEL. The command
	// tree reads SLIM_LOG_LEVEL through its --log-level flag; the hook's
	// fast path, which builds no command tree, uses logLevel.
	logFile  string
	logLevel string
	// astGrep is SLIM_AST_GREP: the ast-grep binary to run for slim search
	// ast and replace ("" means look for one).
	astGrep string
	// path is PATH, where external programs (ast-grep, rg) are looked for.
	path string
	// rg is SLIM_RG: the ripgrep binary slim search grep and glob (and
	// slim doctor) use instead of looking for one.
	rg string
	// openCodeBin is OpenCode's bin directory, $XDG_CACHE_HOME/opencode/bin
	// or ~/.cache/opencode/bin, where OpenCode keeps the rg it downloads;
	// slim only reads it. "" when neither variable is set.
	openCodeBin string
	// getenv reads the environment for the settings only one command
	// uses: slim fetch reads its own (readFetchSettings) when it runs, so
	// that no other command, the hook above all, pays for them.
	getenv func(string) string
}

// fetchSettings are the operator's switches for slim fetch, read when it
// runs. None of them can come from the model's arguments.
type fetchSettings struct {
	// allowPrivate is SLIM_FETCH_ALLOW_PRIVATE=1 (loopback, private and
	// unique-local addresses), allowLinkLocal SLIM_FETCH_ALLOW_LINK_LOCAL=1
	// (link-local, which includes cloud metadata addresses).
	// privateSet and linkLocalSet say that the variable is set at all (to
	// anything): a set variable wins over the configuration file, and
	// any value but 1 keeps the class closed.
	allowPrivate, allowLinkLocal bool
	privateSet, linkLocalSet     bool
	// cacheDir is SLIM_CACHE_DIR ("" means the user cache directory);
	// cacheOff is SLIM_FETCH_CACHE=off; cacheTTL SLIM_FETCH_CACHE_TTL (a Go
	// duration or seconds) and cacheMaxBytes SLIM_FETCH_CACHE_MAX_BYTES.
	cacheDir      string
	cacheOff      bool
	cacheTTL      time.Duration
	cacheMaxBytes int64
	// probeTimeout is SLIM_FETCH_PROBE_TIMEOUT, the llms.txt probe's cap.
	probeTimeout time.Duration
	// models is SLIM_FETCH_MODELS (comma-separated provider/model[#variant]),
	// tried after the --model flags; modelBackend SLIM_FETCH_MODEL_BACKEND
	// (opencode, openai, none); modelTimeout SLIM_FETCH_MODEL_TIMEOUT.
	models       []string
	modelBackend string
	modelTimeout time.Duration
	// The OpenAI-compatible endpoint: SLIM_FETCH_OPENAI_BASE_URL,
	// SLIM_FETCH_OPENAI_API_KEY and SLIM_FETCH_OPENAI_MODEL_MAP
	// ("provider/model=name,...").
	openAIBase, openAIKey string
	openAIModelMap        map[string]string
	// OPENCODE_SERVER_USERNAME and OPENCODE_SERVER_PASSWORD: the OpenCode
	// server's basic auth.
	openCodeUser, openCodePassword string
	// proxy is HTTPS_PROXY / HTTP_PROXY / NO_PROXY (either case), nil when
	// no proxy is set.
	proxy *httpproxy.Config
}

// readFetchSettings reads the SLIM_FETCH_* variables. A malformed number
// or duration is ignored (the default applies).
func readFetchSettings(getenv func(string) string) fetchSettings {
	s := fetchSettings{
		allowPrivate:     getenv("SLIM_FETCH_ALLOW_PRIVATE") == "1",
		allowLinkLocal:   getenv("SLIM_FETCH_ALLOW_LINK_LOCAL") == "1",
		privateSet:       getenv("SLIM_FETCH_ALLOW_PRIVATE") != "",
		linkLocalSet:     getenv("SLIM_FETCH_ALLOW_LINK_LOCAL") != "",
		cacheDir:         getenv("SLIM_CACHE_DIR"),
		cacheOff:         strings.EqualFold(getenv("SLIM_FETCH_CACHE"), "off"),
		cacheTTL:         envDuration(getenv("SLIM_FETCH_CACHE_TTL")),
		probeTimeout:     envDuration(getenv("SLIM_FETCH_PROBE_TIMEOUT")),
		modelBackend:     getenv("SLIM_FETCH_MODEL_BACKEND"),
		modelTimeout:     envDuration(getenv("SLIM_FETCH_MODEL_TIMEOUT")),
		openAIBase:       getenv("SLIM_FETCH_OPENAI_BASE_URL"),
		openAIKey:        getenv("SLIM_FETCH_OPENAI_API_KEY"),
		openCodeUser:     getenv("OPENCODE_SERVER_USERNAME"),
		openCodePassword: getenv("OPENCODE_SERVER_PASSWORD"),
	}
	p := &httpproxy.Config{
		HTTPProxy:  firstOf(getenv("HTTP_PROXY"), getenv("http_proxy")),
		HTTPSProxy: firstOf(getenv("HTTPS_PROXY"), getenv("https_proxy")),
		NoProxy:    firstOf(getenv("NO_PROXY"), getenv("no_proxy")),
	}
	if p.HTTPProxy != "" || p.HTTPSProxy != "" {
		s.proxy = p
	}
	if n, err := strconv.ParseInt(getenv("SLIM_FETCH_CACHE_MAX_BYTES"), 10, 64); err == nil && n > 0 {
		s.cacheMaxBytes = n
	}
	for _, m := range strings.Split(getenv("SLIM_FETCH_MODELS"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			s.models = append(s.models, m)
		}
	}
	for _, kv := range strings.Split(getenv("SLIM_FETCH_OPENAI_MODEL_MAP"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.TrimSpace(k) != "" {
			if s.openAIModelMap == nil {
				s.openAIModelMap = map[string]string{}
			}
			s.openAIModelMap[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return s
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// envDuration parses a Go duration ("1.5s") or a number of seconds; 0 when
// empty or malformed.
func envDuration(v string) time.Duration {
	if v == "" {
		return 0
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
		return time.Duration(f * float64(time.Second))
	}
	return 0
}

// readSettings reads the settings from the environment.
func readSettings(getenv func(string) string) settings {
	return settings{
		allowNested: getenv("SLIM_ALLOW_NESTED") == "1",
		outside:     getenv("SLIM_OUTSIDE"),
		hookTimeout: getenv("SLIM_HOOK_TIMEOUT_MS"),
		logFile:     getenv("SLIM_LOG_FILE"),
		logLevel:    getenv("SLIM_LOG_LEVEL"),
		astGrep:     getenv("SLIM_AST_GREP"),
		path:        getenv("PATH"),
		rg:          getenv("SLIM_RG"),
		openCodeBin: openCodeBinDir(getenv),
		getenv:      getenv,
	}
}

// openCodeBinDir is where OpenCode keeps the programs it downloads: the
// bin folder of its cache directory, under $XDG_CACHE_HOME, else under
// ~/.cache (where OpenCode 1.18 puts it).
func openCodeBinDir(getenv func(string) string) string {
	base := xdgBase(getenv, "XDG_CACHE_HOME", ".cache")
	if base == "" {
		return ""
	}
	return filepath.Join(base, "opencode", "bin")
}

// xdgBase is the base directory the XDG variable xdg names, else the
// directory dflt under $HOME; "" when neither is set.
func xdgBase(getenv func(string) string, xdg, dflt string) string {
	if v := getenv(xdg); v != "" {
		return v
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, dflt)
	}
	return ""
}
