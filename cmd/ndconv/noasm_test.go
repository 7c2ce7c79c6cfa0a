//go:build noasm

package main

// A noasm test run tests the noasm CLI: the binaries the tests build take
// the tag too.
func init() { cliTags = append(cliTags, "noasm") }
