package gpu

import (
	"slices"
	"strings"
)

// DefineOptions are defines ("NAME=value", as kernels.Launch holds them) as
// compiler options: "-D" before each that does not begin with "-" already,
// sorted, so that the same set in another order is the same build and the
// same cache key.
func DefineOptions(defines []string) []string {
	opts := make([]string, 0, len(defines))
	for _, d := range defines {
		if !strings.HasPrefix(d, "-") {
			d = "-D" + d
		}
		opts = append(opts, d)
	}
	slices.Sort(opts)
	return opts
}
