// Package layers holds no code: its test reads the module's import graph
// with `go list` and fails on an import that runs against the layers of
// DESIGN.md §2 (docs/architecture.md), the way Go's own go/build/deps_test.go
// holds the standard library's. The rules, and the known exceptions still
// to be folded away by issue 31, are the table in layers_test.go.
//
// It is a package of its own, not a test of the root, so that checking the
// layers compiles nothing but this test and runs beside the other
// packages' tests.
package layers
