module github.com/go-shiori/dom

go 1.23.0

require (
	github.com/andybalholm/cascadia v1.3.4
	golang.org/x/net v0.62.0
)
