package fetch

import (
	"context"
	"net/http/httptest"
	"testing"
)

// BenchmarkFetchCacheHit is one Fetch answered from a fresh on-disk entry:
// open the store, read and decode the entry, render.
func BenchmarkFetchCacheHit(b *testing.B) {
	srv := httptest.NewServer(htmlPage(articlePage))
	b.Cleanup(srv.Close)
	cfg := Config{Cache: CacheConfig{Dir: b.TempDir()}}
	cfg.Network.Resolve = map[string]string{"site.example.com:443": srv.Listener.Addr().String(), "site.example.com:80": srv.Listener.Addr().String()}
	r := NewRequest("http://site.example.com/guide")
	if _, err := Fetch(context.Background(), r, cfg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Fetch(context.Background(), r, cfg)
		if err != nil || res.Metadata.Get("cache_hit") != true {
			b.Fatalf("not a hit: %v", err)
		}
	}
}

// BenchmarkFetchPage is one uncached Fetch of an article page from a local
// server: connect, read, extract, render.
func BenchmarkFetchPage(b *testing.B) {
	srv := httptest.NewServer(htmlPage(articlePage))
	b.Cleanup(srv.Close)
	cfg := Config{}
	// https is tried first, and fails at once against the plain server.
	cfg.Network.Resolve = map[string]string{"site.example.com:443": srv.Listener.Addr().String(), "site.example.com:80": srv.Listener.Addr().String()}
	r := NewRequest("http://site.example.com/guide")
	r.PreferLLMs = LLMsNever
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Fetch(context.Background(), r, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
