// Command slim links slim's extractor (fetch/internal/extract and
// fetch/internal/decode) and does nothing else, the baseline for
// ../trafilatura.
package main

import (
	_ "github.com/slimgate/slim/fetch/internal/decode"
	_ "github.com/slimgate/slim/fetch/internal/extract"
)

func main() {}
