package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/slimgate/slim/fetch"
	"github.com/slimgate/slim/internal/slimerr"
	"github.com/urfave/cli/v2"
)

func init() { register(fetchCommand) }

// maxFetchArgs bounds the JSON object `slim fetch -` reads.
const maxFetchArgs = 1 << 20

func fetchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "fetch",
		Usage: "fetch a URL and print its main content as markdown, with a metadata block",
		UsageText: "slim fetch [flags] URL\n" +
			"slim fetch [context flags] [--json] [--plan] -     (the arguments as one JSON object on stdin)\n\n" +
			"Prints the page's main content (navigation, footers and sidebars removed) as markdown, text\n" +
			"or HTML behind a metadata block. A redirect to another host is not followed: the answer\n" +
			"names it (exit 0). Private, loopback and link-local addresses are refused (exit 5) unless\n" +
			"SLIM_FETCH_ALLOW_PRIVATE=1 / SLIM_FETCH_ALLOW_LINK_LOCAL=1. A failed request exits 1 with\n" +
			"the reason on stderr; a bad argument exits 2. Results are cached on disk and revalidated.\n" +
			"The user configuration file ($SLIM_CONFIG, else ~/.config/slim/config.json) may set\n" +
			"fetch.allowPrivate, fetch.allowLinkLocal and fetch.models; a variable that is set wins.\n\n" +
			"Examples:\n" +
			"   slim fetch https://go.dev/ref/spec\n" +
			"   slim fetch --format text --include-metadata=false https://docs.example.com/guide\n" +
			"   echo '{\"url\":\"https://example.com\",\"format\":\"markdown\"}' | slim fetch --json -",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "markdown, text or html"},
			&cli.Float64Flag{Name: "timeout", Value: fetch.DefaultTimeout.Seconds(), Usage: "seconds for the whole fetch (more than 0, at most 120)"},
			&cli.StringFlag{Name: "prompt", Usage: "ask the secondary model this about the page and print its answer instead"},
			&cli.BoolFlag{Name: "extract-main", Value: true, Usage: "keep only the main content (--extract-main=false: the whole body)"},
			&cli.StringFlag{Name: "prefer-llms-txt", Value: "auto", Usage: "auto (documentation hosts), always or never: use the site's llms.txt instead of the page"},
			&cli.BoolFlag{Name: "include-metadata", Value: true, Usage: "print the metadata block"},
			&cli.BoolFlag{Name: "save-binary", Usage: "save a binary download (up to 10 MiB) to an owner-only directory"},
			&cli.BoolFlag{Name: "plan", Usage: "print the permission plan (URLs that may be contacted) as JSON and fetch nothing"},
			&cli.BoolFlag{Name: "no-cache", Usage: "neither read nor write the cache"},
			&cli.BoolFlag{Name: "refresh", Usage: "skip the cached copy, but store the new one"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object: output, title, metadata, error"},
			// Context from the host (the OpenCode plugin), never from the model.
			&cli.StringFlag{Name: "opencode-url", Usage: "the OpenCode server, for the secondary model (host context)"},
			&cli.StringFlag{Name: "session-id", Usage: "the calling session (host context)"},
			&cli.StringFlag{Name: "directory", Usage: "the project directory (host context)"},
			&cli.GenericFlag{Name: "model", Value: &listFlag{}, Usage: "a secondary model provider/model[#variant], tried in order (repeatable; host context)"},
			&cli.GenericFlag{Name: "allow-origin", Value: &listFlag{}, Usage: "an origin redirects may also go to (repeatable; host context)"},
			&cli.GenericFlag{Name: "resolve", Value: &listFlag{}, Usage: "HOST:PORT:ADDR[:PORT2], connect there for HOST:PORT (like curl; exempt from the address policy; repeatable)"},
		},
		Action: func(c *cli.Context) error {
			// The resident slim set the collector up once for all its runs.
			if !e.served {
				collectForPages()
			}
			req, err := fetchRequest(e, c)
			if err == nil && c.Bool("plan") {
				var plan *fetch.Plan
				plan, err = fetch.PlanFor(req)
				if err == nil {
					return e.writeJSON(plan)
				}
			}
			var res *fetch.Result
			if err == nil {
				var cfg fetch.Config
				if cfg, err = fetchConfig(e, c); err == nil {
					ctx, stop := e.interruptible()
					defer stop()
					res, err = fetch.Fetch(ctx, req, cfg)
					if res != nil {
						for _, w := range res.Warnings {
							e.log.Warn().Str("url", req.URL).Msg(w)
						}
					}
				}
			}
			if jsonMode(c) {
				return answerJSON(e, fetchAnswer(res, err), err)
			}
			if err != nil {
				return err
			}
			out := res.Output
			if !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			_, err = io.WriteString(e.stdout, out)
			return err
		},
	}
}

// collectForPages sets the garbage collector up for parsing pages: a
// page's parse makes a great deal of short-lived garbage, so collecting
// less often (GOGC 400) extracts a dense megabyte of HTML about a fifth
// faster, and a soft memory limit makes a 10 MiB page, or several at once
// in the resident slim, still collect in time. The heap of a process
// between pages (the resident slim's, answering hooks) is a few
// megabytes, so the higher GOGC costs little memory there.
func collectForPages() {
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(384 << 20)
}

// fetchJSON is the --json answer: what a host needs to show the result.
type fetchJSON struct {
	OK       bool           `json:"ok"`
	Output   string         `json:"output"`
	Title    string         `json:"title,omitempty"`
	Metadata *fetchJSONMeta `json:"metadata,omitempty"`
	Error    *slimerr.JSON  `json:"error,omitempty"`
}

type fetchJSONMeta struct {
	URL         string         `json:"url"`
	ContentType string         `json:"contentType"`
	Truncated   bool           `json:"truncated"`
	Fields      fetch.Metadata `json:"fields"`
}

func fetchAnswer(res *fetch.Result, err error) fetchJSON {
	if err != nil || res == nil {
		return fetchJSON{Error: errorJSON(err)}
	}
	u, _ := res.Metadata.Get("final_url").(string)
	if u == "" {
		u, _ = res.Metadata.Get("requested_url").(string)
	}
	return fetchJSON{OK: true, Output: res.Output, Title: res.Title,
		Metadata: &fetchJSONMeta{URL: u, ContentType: res.ContentType, Truncated: res.Truncated, Fields: res.Metadata}}
}

// fetchArgs are the tool's arguments as `slim fetch -` reads them.
type fetchArgs struct {
	URL             string   `json:"url"`
	Format          *string  `json:"format"`
	Timeout         *float64 `json:"timeout"`
	Prompt          *string  `json:"prompt"`
	ExtractMain     *bool    `json:"extract_main"`
	PreferLLMsTxt   *string  `json:"prefer_llms_txt"`
	IncludeMetadata *bool    `json:"include_metadata"`
	SaveBinary      *bool    `json:"save_binary"`
}

// fetchRequest builds the request from the flags, or from the JSON object
// on stdin when the argument is "-"; flags given on the command line are
// defaults the object overrides.
func fetchRequest(e *env, c *cli.Context) (fetch.Request, error) {
	if c.NArg() != 1 {
		return fetch.Request{}, usageErr("slim fetch takes one URL (or - for a JSON object on stdin); run 'slim fetch --help'")
	}
	req := fetch.NewRequest(c.Args().First())
	req.Format = fetch.Format(c.String("format"))
	req.Timeout = seconds(c.Float64("timeout"))
	if c.IsSet("prompt") {
		p := c.String("prompt")
		req.Prompt = &p
	}
	req.ExtractMain = c.Bool("extract-main")
	req.PreferLLMs = fetch.LLMsMode(c.String("prefer-llms-txt"))
	req.IncludeMetadata = c.Bool("include-metadata")
	req.SaveBinary = c.Bool("save-binary")
	if req.URL == "-" {
		raw, err := io.ReadAll(io.LimitReader(e.stdin, maxFetchArgs+1))
		if err != nil {
			return req, slimerr.Wrap(slimerr.Internal, slimerr.CodeInternal, fmt.Errorf("reading the arguments: %w", err))
		}
		if len(raw) > maxFetchArgs {
			return req, usageErr("the arguments on stdin are larger than %d bytes", maxFetchArgs)
		}
		a, err := decodeFetchArgs(raw)
		if err != nil {
			return req, usageErr("the arguments on stdin are not one JSON object of url, format, timeout, prompt, extract_main, prefer_llms_txt, include_metadata, save_binary: %v", err)
		}
		req.URL = a.URL
		if a.Format != nil {
			req.Format = fetch.Format(*a.Format)
		}
		if a.Timeout != nil {
			req.Timeout = seconds(*a.Timeout)
		}
		if a.Prompt != nil {
			req.Prompt = a.Prompt
		}
		if a.ExtractMain != nil {
			req.ExtractMain = *a.ExtractMain
		}
		if a.PreferLLMsTxt != nil {
			req.PreferLLMs = fetch.LLMsMode(*a.PreferLLMsTxt)
		}
		if a.IncludeMetadata != nil {
			req.IncludeMetadata = *a.IncludeMetadata
		}
		if a.SaveBinary != nil {
			req.SaveBinary = *a.SaveBinary
		}
	}
	return req, req.Validate()
}

// fetchArgKeys are the keys `slim fetch -` takes, spelled exactly (Go's
// JSON decoder alone would also take "URL" or "Format").
var fetchArgKeys = map[string]bool{"url": true, "format": true, "timeout": true, "prompt": true,
	"extract_main": true, "prefer_llms_txt": true, "include_metadata": true, "save_binary": true}

// decodeFetchArgs reads exactly one JSON object with known keys.
func decodeFetchArgs(raw []byte) (fetchArgs, error) {
	var a fetchArgs
	var keys map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&keys); err != nil {
		return a, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return a, fmt.Errorf("more after the object")
	}
	for k := range keys {
		if !fetchArgKeys[k] {
			return a, fmt.Errorf("unknown key %q", k)
		}
	}
	err := json.Unmarshal(raw, &a)
	return a, err
}

// seconds converts a timeout in seconds; out-of-range values are left for
// Validate to refuse.
func seconds(s float64) time.Duration {
	if s > 1e6 {
		s = 1e6
	}
	return time.Duration(s * float64(time.Second))
}

// fetchConfig is the operator's side: the SLIM_FETCH_* settings, the user
// configuration file and the host's context flags. The file is read here,
// on every run (the resident slim's runs included), so a fetch sees it as
// it is now; a variable that is set wins over it.
func fetchConfig(e *env, c *cli.Context) (fetch.Config, error) {
	s := readFetchSettings(e.cfg.getenv)
	uc, err := readUserConfig(userConfigPath(e.cfg.getenv), projectDirs(c.String("directory")))
	if err != nil {
		return fetch.Config{}, err
	}
	if f := uc.Fetch; f.AllowPrivate != nil && !s.privateSet {
		s.allowPrivate = *f.AllowPrivate
	}
	if f := uc.Fetch; f.AllowLinkLocal != nil && !s.linkLocalSet {
		s.allowLinkLocal = *f.AllowLinkLocal
	}
	cfg := fetch.Config{
		Network:      fetch.Network{AllowPrivate: s.allowPrivate, AllowLinkLocal: s.allowLinkLocal, Proxy: s.proxy},
		AllowOrigins: listOf(c, "allow-origin"),
		ProbeTimeout: s.probeTimeout,
	}
	for _, r := range listOf(c, "resolve") {
		key, target, err := fetch.ParseResolve(r)
		if err != nil {
			return cfg, err
		}
		if cfg.Network.Resolve == nil {
			cfg.Network.Resolve = map[string]string{}
		}
		cfg.Network.Resolve[key] = target
	}
	if !c.Bool("no-cache") && !s.cacheOff {
		dir := s.cacheDir
		if dir == "" {
			base, err := os.UserCacheDir()
			if err == nil {
				dir = filepath.Join(base, "slim", "fetch")
			}
		}
		cfg.Cache = fetch.CacheConfig{Dir: dir, Refresh: c.Bool("refresh"), TTL: s.cacheTTL, MaxBytes: s.cacheMaxBytes}
	}
	// The chain: the host's --model flags, then SLIM_FETCH_MODELS, or,
	// when that is not set, the file's models.
	models := listOf(c, "model")
	if len(s.models) > 0 {
		models = append(models, s.models...)
	} else {
		models = append(models, uc.Fetch.Models...)
	}
	cfg.Model = fetch.ModelConfig{
		Models:  models,
		Backend: s.modelBackend,
		Timeout: s.modelTimeout,
		// The host's context.
		OpenCodeURL: c.String("opencode-url"), SessionID: c.String("session-id"), Directory: c.String("directory"),
		OpenCodeUser: s.openCodeUser, OpenCodePassword: s.openCodePassword,
		OpenAIBaseURL: s.openAIBase, OpenAIKey: s.openAIKey, OpenAIModelMap: s.openAIModelMap,
	}
	return cfg, nil
}
