package astgrep

import "sort"

// Languages are the values --lang takes, as ast-grep spells them.
var Languages = []string{
	"bash", "c", "cpp", "csharp", "css", "elixir", "go", "haskell", "html",
	"java", "javascript", "json", "kotlin", "lua", "nix", "php", "python",
	"ruby", "rust", "scala", "solidity", "swift", "tsx", "typescript", "yaml",
}

// ValidLanguage reports whether lang is one of Languages.
func ValidLanguage(lang string) bool {
	i := sort.SearchStrings(Languages, lang)
	return i < len(Languages) && Languages[i] == lang
}
