module codeberg.org/readeck/go-readability/v2

go 1.23.0

require (
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c
	github.com/itlightning/dateparse v0.2.1
	golang.org/x/net v0.62.0
)
