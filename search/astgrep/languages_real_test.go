package astgrep

import (
	"context"
	"sort"
	"strings"
	"testing"
)

// languageFixtures holds, for every value of Languages, a small file in
// that language and a pattern that matches it once: the name passed as
// --lang must be one the real ast-grep knows, and it must pick that file
// out of a tree holding every other language's file.
var languageFixtures = map[string]struct{ file, src, pattern, match string }{
	"bash":       {"a.sh", "echo hello\n", "echo $A", "echo hello"},
	"c":          {"a.c", "int main() { return 0; }\n", "return $A;", "return 0;"},
	"cpp":        {"a.cpp", "int f() { return 1; }\n", "return $A;", "return 1;"},
	"csharp":     {"a.cs", "class A { void F() { Console.WriteLine(1); } }\n", "Console.WriteLine($A)", "Console.WriteLine(1)"},
	"css":        {"a.css", "a { color: red; }\n", "a { $$$A }", "a { color: red; }"},
	"elixir":     {"a.ex", "IO.puts(\"hi\")\n", "IO.puts($A)", "IO.puts(\"hi\")"},
	"go":         {"a.go", "package a; func f() (int, error) { return 0, nil }\n", "return $A, nil", "return 0, nil"},
	"haskell":    {"a.hs", "main = putStrLn \"hi\"\n", "putStrLn $A", "putStrLn \"hi\""},
	"html":       {"a.html", "<div>hi</div>\n", "<div>$A</div>", "<div>hi</div>"},
	"java":       {"A.java", "class A { void f() { System.out.println(1); } }\n", "System.out.println($A)", "System.out.println(1)"},
	"javascript": {"a.js", "console.log(1)\n", "console.log($A)", "console.log(1)"},
	"json":       {"a.json", "{\"a\": 1}\n", "{\"a\": $V}", "{\"a\": 1}"},
	"kotlin":     {"a.kt", "fun main() { println(1) }\n", "println($A)", "println(1)"},
	"lua":        {"a.lua", "print(1)\n", "print($A)", "print(1)"},
	"nix":        {"a.nix", "{ a = 1; }\n", "{ a = $V; }", "{ a = 1; }"},
	"php":        {"a.php", "<?php echo 1;\n", "echo $A;", "echo 1;"},
	"python":     {"a.py", "print(1)\n", "print($A)", "print(1)"},
	"ruby":       {"a.rb", "puts 1\n", "puts $A", "puts 1"},
	"rust":       {"a.rs", "fn main() { println!(\"hi\"); }\n", "println!($$$A)", "println!(\"hi\")"},
	"scala":      {"a.scala", "object A { println(1) }\n", "println($A)", "println(1)"},
	"solidity":   {"a.sol", "contract A { uint x = 1; }\n", "uint $X = $V;", "uint x = 1;"},
	"swift":      {"a.swift", "print(1)\n", "print($A)", "print(1)"},
	"tsx":        {"a.tsx", "const a = <div>hi</div>;\n", "<div>$A</div>", "<div>hi</div>"},
	"typescript": {"a.ts", "console.log(1)\n", "console.log($A)", "console.log(1)"},
	"yaml":       {"a.yml", "a: 1\n", "a: $V", "a: 1"},
}

// Every language slim offers is one the real ast-grep searches, by that
// name and in that language's files only.
func TestSearchEveryLanguageWithTheRealAstGrep(t *testing.T) {
	var names []string
	files := map[string]string{}
	for lang, f := range languageFixtures {
		names = append(names, lang)
		files[f.file] = f.src
	}
	sort.Strings(names)
	if strings.Join(names, " ") != strings.Join(Languages, " ") {
		t.Fatalf("the fixtures cover %v, Languages are %v", names, Languages)
	}
	dir := repo(t, files)
	for _, lang := range Languages {
		f := languageFixtures[lang]
		t.Run(lang, func(t *testing.T) {
			res, err := Search(context.Background(), SearchOptions{Query: query(t, dir, lang, f.pattern)})
			if err != nil {
				t.Fatalf("--lang %s: %v", lang, err)
			}
			if res.Total != 1 || res.Matches[0].File != f.file || res.Matches[0].Text != f.match || res.Matches[0].Line != 1 {
				t.Fatalf("--lang %s -p %q: want one match %q in %s, got %+v\n%s", lang, f.pattern, f.match, f.file, res.Matches, res.Output)
			}
		})
	}
}
