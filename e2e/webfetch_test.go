package e2e

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	fp "github.com/slimgate/slim/fixtures/fakeprovider"
)

// Texts the webfetch scenarios look for.
const (
	// fetchDescription starts the description of the plugin's webfetch; the
	// host's own describes itself otherwise.
	fetchDescription = "Fetch a web page and read its main content."
	// fetchUA starts the User-Agent slim sends; the host's own webfetch
	// sends a browser's.
	fetchUA = "slim-fetch/"
	// hostRejected is the host's answer to a permission request that
	// nobody can answer (a non-interactive run).
	hostRejected = "The user rejected permission to use this specific tool call."
	docArticle   = "Widgets are installed with a single command."
	docNav       = "NAVLINK"
	docFooter    = "FOOTERTEXT"
)

// docPage is a documentation page: navigation, an article with a Go code
// block, and a footer.
const docPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Installing Widgets</title></head>
<body>
<nav><ul><li><a href="/">NAVLINK Home</a></li><li><a href="/blog">NAVLINK Blog</a></li><li><a href="/about">NAVLINK About</a></li></ul></nav>
<main><article>
<h1>Installing Widgets</h1>
<p>Widgets are installed with a single command. This guide explains every step of the installation
in detail, so that a first-time reader can follow it without any prior knowledge of widgets.</p>
<p>First download the release for your platform, then unpack it into a directory on your PATH. The
widget binary needs no configuration file; it reads its settings from the environment.</p>
<pre><code class="language-go">package main

func main() { widgets.Install() }
</code></pre>
<p>After the installation, run the widget once to check that it starts. It prints its version and exits.</p>
</article></main>
<footer><p>FOOTERTEXT Copyright Widgets Inc.</p></footer>
</body></html>
`

// pageRequest is one request the documentation server received.
type pageRequest struct{ path, userAgent string }

// docServer serves docPage at /docs/install.html (and any other path as a
// small page) over plain http on 127.0.0.1, and records every request.
type docServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []pageRequest
}

func startDocServer(t *testing.T) *docServer {
	t.Helper()
	d := &docServer{}
	d.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.seen = append(d.seen, pageRequest{r.URL.Path, r.UserAgent()})
		d.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/docs/install.html" {
			_, _ = io.WriteString(w, docPage)
			return
		}
		_, _ = io.WriteString(w, "<!doctype html><title>Other</title><p>SECRET other page</p>")
	}))
	// slim tries https first on an http URL; the handshake that this plain
	// server cannot answer is expected, not worth a log line.
	d.Config.ErrorLog = log.New(io.Discard, "", 0)
	d.Start()
	t.Cleanup(d.Close)
	return d
}

func (d *docServer) requests() []pageRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]pageRequest(nil), d.seen...)
}

// fetchProject is a project with the slim plugin in which slim's fetch
// cache is a directory of the run, and loopback pages may be fetched when
// allowPrivate is set.
func fetchProject(t *testing.T, allowPrivate bool) (p *project, cacheDir string) {
	t.Helper()
	p = newProject(t, withSlim, map[string]string{"README.md": "docs reader\n"})
	cacheDir = filepath.Join(p.root, "fetch-cache")
	p.env = append(p.env, "SLIM_CACHE_DIR="+cacheDir)
	if allowPrivate {
		p.env = append(p.env, "SLIM_FETCH_ALLOW_PRIVATE=1")
	}
	return p, cacheDir
}

func webfetch(url string) fp.ToolCall { return fp.Call("webfetch", map[string]string{"url": url}) }

// The plugin's webfetch takes the place of the host's: the model is offered
// one webfetch, slim's, with only url required; a documentation page comes
// back as slim's markdown (the metadata block, the article with its code
// fence, no navigation), fetched by slim and not by the host.
func TestWebfetchServedBySlim(t *testing.T) {
	t.Parallel()
	docs := startDocServer(t)
	p, cacheDir := fetchProject(t, true)
	r := p.run(fp.Calls(webfetch(docs.URL+"/docs/install.html")), fp.Text("done"))
	t.Run("one webfetch is offered, slim's, requiring only url", func(t *testing.T) {
		var body struct {
			Tools []struct {
				Function struct {
					Name        string `json:"name"`
					Description string `json:"description"`
					Parameters  struct {
						Required   []string       `json:"required"`
						Properties map[string]any `json:"properties"`
					} `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(r.provider.ScriptedRequests()[0].Body, &body); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tool := range body.Tools {
			f := tool.Function
			if f.Name != "webfetch" {
				continue
			}
			n++
			if !strings.HasPrefix(f.Description, fetchDescription) {
				t.Errorf("webfetch is described as %q, want slim's description", clip(f.Description, 200))
			}
			if got := strings.Join(f.Parameters.Required, ","); got != "url" {
				t.Errorf("webfetch requires %q, want url only", got)
			}
			for _, arg := range []string{"format", "timeout", "prompt", "extract_main", "prefer_llms_txt", "include_metadata", "save_binary"} {
				if _, ok := f.Parameters.Properties[arg]; !ok {
					t.Errorf("webfetch has no %s argument", arg)
				}
			}
		}
		if n != 1 {
			t.Errorf("the host offered %d webfetch tools, want 1", n)
		}
	})
	t.Run("the page comes back as slim's markdown", func(t *testing.T) {
		got := r.result(t, 0, 0)
		wantPrefix(t, "webfetch result", got, "---\nrequested_url: ")
		for _, want := range []string{docArticle, "```go\npackage main\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("webfetch result lacks %q: %q", want, clip(got, 1500))
			}
		}
		for _, unwanted := range []string{docNav, docFooter} {
			if strings.Contains(got, unwanted) {
				t.Errorf("webfetch result carries the page's %q: %q", unwanted, clip(got, 1500))
			}
		}
	})
	t.Run("slim fetched the page, the host did not", func(t *testing.T) {
		seen := docs.requests()
		if len(seen) == 0 {
			t.Fatal("the documentation server got no request")
		}
		for _, req := range seen {
			if !strings.HasPrefix(req.userAgent, fetchUA) {
				t.Errorf("%s was fetched with User-Agent %q, not by slim", req.path, req.userAgent)
			}
		}
		entries, err := os.ReadDir(cacheDir)
		if err != nil || len(entries) == 0 {
			t.Errorf("slim's cache %s is empty (%v): SLIM_CACHE_DIR did not reach slim", cacheDir, err)
		}
	})
	t.Run("the resident slim ran the plan and the fetch, no process of their own", func(t *testing.T) {
		if got := p.servedRuns("fetch"); got[0] != 2 || len(got) != 1 {
			t.Errorf("the resident slim's fetch runs by exit code: %v, want 2 with exit 0 (the plan and the fetch)", got)
		}
	})
}

// The user's webfetch permission still decides. The host asks nothing for
// a plugin tool by itself, so the plugin asks it: under an ask rule the
// request is refused (a non-interactive run refuses every one) and nothing
// is fetched. Under a deny rule the host does not offer the tool at all.
func TestWebfetchPermission(t *testing.T) {
	t.Parallel()
	for _, rule := range []string{"ask", "deny"} {
		t.Run(rule, func(t *testing.T) {
			t.Parallel()
			docs := startDocServer(t)
			p, _ := fetchProject(t, true)
			p.permission = map[string]any{"*": "allow", "webfetch": rule}
			r := p.run(fp.Calls(webfetch(docs.URL+"/docs/install.html")), fp.Text("done"))
			wantRuleObeyed(t, r, "webfetch", rule)
			if seen := docs.requests(); len(seen) != 0 {
				t.Errorf("the page was fetched although the permission was refused: %v", seen)
			}
		})
	}
}

// Without SLIM_FETCH_ALLOW_PRIVATE slim refuses a page on this machine, and
// the model reads why: a loopback address, and the setting that opens it.
func TestWebfetchRefusesLoopbackByDefault(t *testing.T) {
	t.Parallel()
	docs := startDocServer(t)
	p, _ := fetchProject(t, false)
	r := p.run(fp.Calls(webfetch(docs.URL+"/docs/install.html")), fp.Text("done"))
	got := r.result(t, 0, 0)
	for _, want := range []string{"loopback", "SLIM_FETCH_ALLOW_PRIVATE=1"} {
		if !strings.Contains(got, want) {
			t.Errorf("webfetch of a loopback page: want slim's refusal naming %q, got %q", want, clip(got, 600))
		}
	}
	if seen := docs.requests(); len(seen) != 0 {
		t.Errorf("the loopback page was requested: %v", seen)
	}
}
