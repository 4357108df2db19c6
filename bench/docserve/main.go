// Command docserve serves directories of documentation over http on
// 127.0.0.1 for the fetch benchmark: each -root PREFIX=DIR is served under
// /PREFIX/. It prints its base URL on the first line of stdout and serves
// until it is killed.
//
// Usage:
//
//	docserve -root rust=/path/to/rust/html -root node=/path/to/node/api
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
)

type roots []string

func (r *roots) String() string     { return strings.Join(*r, ",") }
func (r *roots) Set(s string) error { *r = append(*r, s); return nil }

func main() {
	var rs roots
	flag.Var(&rs, "root", "PREFIX=DIR to serve under /PREFIX/ (repeatable)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	mux := http.NewServeMux()
	for _, r := range rs {
		prefix, dir, ok := strings.Cut(r, "=")
		if !ok || prefix == "" || dir == "" {
			fmt.Fprintf(os.Stderr, "docserve: bad -root %q (want PREFIX=DIR)\n", r)
			os.Exit(2)
		}
		p := "/" + strings.Trim(prefix, "/") + "/"
		mux.Handle(p, http.StripPrefix(p, http.FileServer(http.Dir(dir))))
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docserve:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "docserve:", err)
		os.Exit(1)
	}
}
