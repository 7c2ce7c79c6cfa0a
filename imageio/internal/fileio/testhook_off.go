//go:build !ndconv_testhook

package fileio

import "context"

// testHookWriting runs after each chunk a contextWriter writes; only
// binaries built with the ndconv_testhook tag (the CLI's signal tests) do
// anything there.
func testHookWriting(context.Context) {}
