package main

import (
	"reflect"
	"testing"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Every operator switch of slim fetch is read from its own variable, and
// nothing else opens an address class: a misspelt name (the link-local
// switch above all, which no script can exercise without dialing a
// metadata address) fails here.
func TestFetchSettingsReadEachVariable(t *testing.T) {
	env := map[string]string{
		"SLIM_FETCH_ALLOW_PRIVATE":    "1",
		"SLIM_FETCH_ALLOW_LINK_LOCAL": "1",
		"SLIM_CACHE_DIR":              "/c",
		"SLIM_FETCH_CACHE":            "OFF",
		"SLIM_FETCH_CACHE_TTL":        "90",
		"SLIM_FETCH_CACHE_MAX_BYTES":  "1000",
		"SLIM_FETCH_PROBE_TIMEOUT":    "2s",
		"SLIM_FETCH_MODELS":           " p/a , ,p/b#fast",
		"SLIM_FETCH_MODEL_BACKEND":    "openai",
		"SLIM_FETCH_MODEL_TIMEOUT":    "1.5s",
		"SLIM_FETCH_OPENAI_BASE_URL":  "http://llm.example.com/v1",
		"SLIM_FETCH_OPENAI_API_KEY":   "k",
		"SLIM_FETCH_OPENAI_MODEL_MAP": "p/a=gpt-x, bad ,p/b = y",
		"OPENCODE_SERVER_USERNAME":    "u",
		"OPENCODE_SERVER_PASSWORD":    "pw",
		"https_proxy":                 "http://proxy.example.com:3128",
		"NO_PROXY":                    "internal.example.com",
	}
	got := readFetchSettings(func(k string) string { return env[k] })
	want := fetchSettings{
		allowPrivate: true, allowLinkLocal: true, privateSet: true, linkLocalSet: true,
		cacheDir: "/c", cacheOff: true, cacheTTL: 90 * time.Second, cacheMaxBytes: 1000,
		probeTimeout: 2 * time.Second,
		models:       []string{"p/a", "p/b#fast"}, modelBackend: "openai", modelTimeout: 1500 * time.Millisecond,
		openAIBase: "http://llm.example.com/v1", openAIKey: "k",
		openAIModelMap: map[string]string{"p/a": "gpt-x", "p/b": "y"},
		openCodeUser:   "u", openCodePassword: "pw",
		proxy: &httpproxy.Config{HTTPSProxy: "http://proxy.example.com:3128", NoProxy: "internal.example.com"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readFetchSettings:\n got %+v\nwant %+v", got, want)
	}

	// The address switches open only on exactly "1"; malformed numbers and
	// durations leave the defaults.
	loose := map[string]string{"SLIM_FETCH_ALLOW_PRIVATE": "true", "SLIM_FETCH_ALLOW_LINK_LOCAL": "yes",
		"SLIM_FETCH_CACHE_MAX_BYTES": "-5", "SLIM_FETCH_CACHE_TTL": "soon"}
	if s := readFetchSettings(func(k string) string { return loose[k] }); s.allowPrivate || s.allowLinkLocal || s.cacheMaxBytes != 0 || s.cacheTTL != 0 || s.proxy != nil {
		t.Errorf("loose values were taken: %+v", s)
	}
}
