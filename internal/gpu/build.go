package gpu

import "github.com/ndconv/ndconv/kernels"

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
