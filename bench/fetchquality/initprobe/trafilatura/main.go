// Command trafilatura links go-trafilatura and does nothing else, so that
// GODEBUG=inittrace=1 shows what its package initialisation costs every
// process that links it. See ../slim for the same with slim's extractor.
package main

import _ "github.com/markusmobius/go-trafilatura"

func main() {}
