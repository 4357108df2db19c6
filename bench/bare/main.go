// Command bare is the reference for start-up benchmarks: a Go binary that
// prints one line and exits. slim's hook path is measured as a ratio to it.
package main

import "fmt"

func main() { fmt.Println("bare") }
