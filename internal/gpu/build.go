package gpu

import (
	"slices"
	"strings"

	"github.com/ndconv/ndconv/kernels"
)

// BuildAll builds the program of each launch in turn with build (a
// backend's compile, or load from its caches, of the family's source with
// the launch's defines), stopping at the first error.
func BuildAll(launches []*kernels.Launch, build func(source string, l *kernels.Launch) error) error {
	for _, l := range launches {
		src, err := kernels.Source(l.Family)
		if err != nil {
			return err
		}
		if err := build(src, l); err != nil {
			return err
		}
	}
	return nil
}

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
