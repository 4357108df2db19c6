module github.com/JohannesKaufmann/html-to-markdown/v2

go 1.25.0

require (
	github.com/JohannesKaufmann/dom v0.3.1
	golang.org/x/net v0.55.0
)
